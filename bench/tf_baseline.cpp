#include "tf_baseline.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <vector>

namespace gradtune::tooling {

using nlohmann::json;

std::unique_ptr<TfBaseline> TfBaseline::start(const std::string &python, const std::string &script, bool onednn,
                                              int threads, std::string *why_not) {
    if (access(python.c_str(), X_OK) != 0) {
        *why_not = python + " not found (scripts/tf-fixtures.sh makes TensorFlow's venv)";
        return nullptr;
    }
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0) {
        *why_not = "pipe failed";
        return nullptr;
    }
    if (pipe(from_child) != 0) {
        close(to_child[0]);
        close(to_child[1]);
        *why_not = "pipe failed";
        return nullptr;
    }
    const pid_t parent = getpid();
    const pid_t pid = fork();
    if (pid < 0) {
        *why_not = "fork failed";
        for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1]}) close(fd);
        return nullptr;
    }
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the benchmark
        if (getppid() != parent) _exit(127);
        dup2(to_child[0], 0);
        dup2(from_child[1], 1);
        for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1]}) close(fd);
        setenv("TF_ENABLE_ONEDNN_OPTS", onednn ? "1" : "0", 1);
        setenv("TF_CPP_MIN_LOG_LEVEL", "2", 1);
        setenv("GRADTUNE_TF_THREADS", std::to_string(threads).c_str(), 1);
        std::vector<char *> argv = {const_cast<char *>(python.c_str()), const_cast<char *>(script.c_str()), nullptr};
        execv(argv[0], argv.data());
        _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    std::unique_ptr<TfBaseline> tf(new TfBaseline());
    tf->pid_ = pid;
    tf->to_child_ = fdopen(to_child[1], "w");
    tf->from_child_ = fdopen(from_child[0], "r");
    if (!tf->to_child_ || !tf->from_child_) {
        *why_not = "fdopen failed";
        return nullptr;
    }
    return tf;
}

TfBaseline::~TfBaseline() {
    if (pid_ > 0) kill(pid_, SIGCONT);
    if (to_child_) fclose(to_child_);  // end of input: the child's loop ends
    if (from_child_) fclose(from_child_);
    if (pid_ > 0) {
        kill(pid_, SIGTERM);
        waitpid(pid_, nullptr, 0);
    }
}

bool TfBaseline::request(const json &message, json *answer, std::string *why_not) {
    // The child runs only while it answers: stopped between its samples, its
    // thread pool cannot spin after its calls on the cores the next
    // participant's sample needs (measured: gradtune's times up to 2x longer
    // with the TensorFlow processes left running).
    kill(pid_, SIGCONT);
    struct Stop {
        pid_t pid;
        ~Stop() { kill(pid, SIGSTOP); }
    } stop{pid_};
    const std::string line = message.dump() + "\n";
    if (fputs(line.c_str(), to_child_) < 0 || fflush(to_child_) != 0) {
        *why_not = "TensorFlow's timer process is gone";
        return false;
    }
    std::string reply;
    for (int c; (c = fgetc(from_child_)) != EOF && c != '\n';) reply.push_back(static_cast<char>(c));
    if (reply.empty()) {
        *why_not = "TensorFlow's timer process ended (is TensorFlow installed in its venv?)";
        return false;
    }
    *answer = json::parse(reply, nullptr, false);
    if (answer->is_discarded()) {
        *why_not = "TensorFlow's timer process wrote: " + reply.substr(0, 200);
        return false;
    }
    return true;
}

bool TfBaseline::setup(const json &call, std::string *why_not) {
    json answer;
    if (!request({{"setup", call}}, &answer, why_not)) return false;
    if (answer.value("ok", false)) return true;
    *why_not = answer.value("error", std::string("refused"));
    return false;
}

Status TfBaseline::run(int iterations, double *elapsed_ms) {
    json answer;
    std::string why;
    if (!request({{"run", iterations}}, &answer, &why)) return Internal(why);
    if (!answer.contains("ms")) return Internal(answer.value("error", std::string("no time")));
    *elapsed_ms = answer.at("ms").get<double>();
    return Status::OK();
}

}  // namespace gradtune::tooling
