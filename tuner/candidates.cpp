#include "candidates.h"

#include <algorithm>
#include <atomic>
#include <fcntl.h>
#include <sys/prctl.h>
#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <thread>

#include "build_info.h"
#include "trials.h"

namespace gradtune::tooling {

namespace fs = std::filesystem;

std::string Candidate::function_name() const {
    const uint64_t h = fnv1a(op + "|" + to_string(device) + "|" + structure.key() + "|" + knobs_text(knobs));
    std::ostringstream out;
    out << "gradtune_candidate_" << std::hex << std::setw(16) << std::setfill('0') << h;
    return out.str();
}

int run_process(const std::vector<std::string> &argv, const std::string &log, double timeout_s) {
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        // Die with the tuner: a generator or measuring child must not outlive
        // a kill -9 of the tuner (the forking thread waits for the child, so
        // it outlives it in normal runs). The getppid check closes the race
        // with a parent that died before the prctl.
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent) _exit(127);
        int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        std::vector<char *> args;
        for (const std::string &a : argv) args.push_back(const_cast<char *>(a.c_str()));
        args.push_back(nullptr);
        execvp(args[0], args.data());
        _exit(127);
    }
    int status = 0;
    const auto start = std::chrono::steady_clock::now();
    for (;;) {
        const pid_t done = waitpid(pid, &status, timeout_s > 0 ? WNOHANG : 0);
        if (done == pid) break;
        if (done < 0) return -1;
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > timeout_s) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return kProcessTimedOut;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

namespace {

std::string tail(const std::string &path, size_t max_chars = 600) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    std::string text = s.str();
    return text.size() > max_chars ? text.substr(text.size() - max_chars) : text;
}

CompiledCandidate compile_one(const Candidate &c, const std::string &work_dir, double timeout_s) {
    const BuildInfo &info = build_info();
    const auto start = std::chrono::steady_clock::now();
    CompiledCandidate out;
    out.candidate = c;
    const std::string name = c.function_name();
    const std::string log = work_dir + "/" + name + ".log";
    // The same command line add_halide_library gives the generator for a
    // variant: same target string (plus no_runtime), same parameters.
    std::vector<std::string> gen = {info.generator, "-g", c.op, "-f", name, "-n", name, "-e", "object", "-o", work_dir,
                                    "target=" + info.target(c.device) + "-no_runtime",
                                    "T=" + c.structure.dtype, "data_format=" + c.structure.data_format};
    for (const auto &[param, value] : c.structure.fixed) gen.push_back(param + "=" + std::to_string(value));
    for (const auto &[knob, value] : c.knobs) gen.push_back(knob + "=" + std::to_string(value));
    const int rc = run_process(gen, log, timeout_s);
    if (rc == kProcessTimedOut) {
        out.timed_out = true;
        out.error = "generator killed after " + std::to_string(static_cast<int>(timeout_s)) + " s";
    } else if (rc != 0) {
        out.error = "generator failed: " + tail(log);
    } else {
        // Halide runtime symbols stay undefined: the measuring process (the
        // gradtune executable, which holds the runtime) provides them.
        const std::string so = work_dir + "/" + name + ".so";
        if (run_process({info.cxx, "-shared", "-o", so, work_dir + "/" + name + ".o"}, log) != 0) {
            out.error = "link failed: " + tail(log);
        } else {
            out.shared_object = so;
        }
    }
    out.compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
}

}  // namespace

std::vector<CompiledCandidate> compile_candidates(const std::vector<Candidate> &candidates,
                                                  const std::string &work_dir, int jobs, double timeout_s) {
    fs::create_directories(work_dir);
    std::vector<CompiledCandidate> out(candidates.size());
    // `jobs` workers take the next candidate as soon as they are free: compile
    // times of one batch differ up to 3x, and lock-step rounds would leave a
    // core idle behind each slow compile.
    std::atomic<size_t> next{0};
    std::vector<std::thread> workers;
    for (int w = 0; w < std::max(1, jobs); w++)
        workers.emplace_back([&] {
            for (size_t i = next++; i < candidates.size(); i = next++)
                out[i] = compile_one(candidates[i], work_dir, timeout_s);
        });
    for (auto &t : workers) t.join();
    return out;
}

void remove_compiled(const CompiledCandidate &c, const std::string &work_dir) {
    const std::string name = c.candidate.function_name();
    for (const char *ext : {".so", ".o", ".log"}) fs::remove(work_dir + "/" + name + ext);
}

Knobs Sampler::random() {
    for (int attempt = 0; attempt < 10000; attempt++) {
        Knobs k;
        for (const Knob &knob : space_.knobs) {
            std::uniform_int_distribution<size_t> pick(0, knob.values.size() - 1);
            k[knob.name] = knob.values[pick(rng_)];
        }
        k = space_.canonical(k);
        if (space_.check(k).empty()) return k;
    }
    return space_.defaults();
}

Knobs Sampler::mutate(const Knobs &base) {
    for (int attempt = 0; attempt < 10000; attempt++) {
        Knobs k = base;
        const int moves = std::uniform_int_distribution<int>(1, 2)(rng_);
        for (int m = 0; m < moves; m++) {
            const Knob &knob = space_.knobs[std::uniform_int_distribution<size_t>(0, space_.knobs.size() - 1)(rng_)];
            auto it = std::find(knob.values.begin(), knob.values.end(), k[knob.name]);
            size_t index = it == knob.values.end() ? 0 : static_cast<size_t>(it - knob.values.begin());
            if (std::uniform_int_distribution<int>(0, 2)(rng_) == 0) {
                index = std::uniform_int_distribution<size_t>(0, knob.values.size() - 1)(rng_);
            } else if (std::uniform_int_distribution<int>(0, 1)(rng_) == 0) {
                index = index + 1 < knob.values.size() ? index + 1 : index - (index > 0);
            } else {
                index = index > 0 ? index - 1 : std::min(index + 1, knob.values.size() - 1);
            }
            k[knob.name] = knob.values[index];
        }
        k = space_.canonical(k);
        if (k != base && space_.check(k).empty()) return k;
    }
    return random();
}

Knobs Sampler::neighbour(const Knobs &base, const std::set<std::string> &tried) {
    std::vector<Knobs> untried;
    std::set<std::string> seen;
    for (const Knob &knob : space_.knobs) {
        auto it = std::find(knob.values.begin(), knob.values.end(), base.count(knob.name) ? base.at(knob.name) : 0);
        if (it == knob.values.end()) continue;
        for (const int step : {-1, 1}) {
            const auto index = (it - knob.values.begin()) + step;
            if (index < 0 || index >= static_cast<long>(knob.values.size())) continue;
            Knobs k = base;
            k[knob.name] = knob.values[index];
            k = space_.canonical(k);
            const std::string text = knobs_text(k);
            if (k == base || !space_.check(k).empty() || tried.count(text) || !seen.insert(text).second) continue;
            untried.push_back(k);
        }
    }
    if (untried.empty()) return mutate(base);
    return untried[std::uniform_int_distribution<size_t>(0, untried.size() - 1)(rng_)];
}

}  // namespace gradtune::tooling
