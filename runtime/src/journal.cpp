#include "journal.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <mutex>
#include <string>

namespace gradtune::internal {

namespace {

std::string quoted(const std::string &text) {
    std::string out = "\"";
    for (char c : text) {
        if (c == '"' || c == '\\') {
            out += '\\';
            out += c;
        } else if (static_cast<unsigned char>(c) < 0x20) {
            char escape[8];
            std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned char>(c));
            out += escape;
        } else {
            out += c;
        }
    }
    return out + "\"";
}

template <typename Map>
std::string object(const Map &values) {
    std::string out = "{";
    for (const auto &[name, value] : values) {
        if (out.size() > 1) out += ", ";
        out += quoted(name) + ": " + std::to_string(value);
    }
    return out + "}";
}

// `, "explicit_paddings": [top, bottom, left, right]` for an EXPLICIT call:
// what a suite needs to rebuild it.
std::string explicit_paddings(const CallInfo &call) {
    if (call.explicit_paddings.empty()) return "";
    std::string out = ", \"explicit_paddings\": [";
    for (size_t i = 0; i < call.explicit_paddings.size(); i++)
        out += (i ? ", " : "") + std::to_string(call.explicit_paddings[i]);
    return out + "]";
}

// A hash of the signature's fields: the strings through std::hash, the
// structure's and shape's values directly (their names follow from the op).
uint64_t signature_hash(const CallInfo &call, Device device) {
    uint64_t h = static_cast<uint64_t>(device) + 0x9e3779b97f4a7c15ull;
    auto mix = [&h](uint64_t v) { h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2); };
    for (const std::string *text : {&call.op, &call.dtype, &call.data_format, &call.padding})
        mix(std::hash<std::string>{}(*text));
    for (const auto &[name, value] : call.structure) mix(static_cast<uint64_t>(value));
    for (const auto &[name, value] : call.shape) mix(static_cast<uint64_t>(value));
    for (int64_t pad : call.explicit_paddings) mix(static_cast<uint64_t>(pad));
    return h;
}

bool same_signature(const CallInfo &a, const CallInfo &b) {
    return a.op == b.op && a.dtype == b.dtype && a.data_format == b.data_format && a.structure == b.structure &&
           a.padding == b.padding && a.explicit_paddings == b.explicit_paddings && a.shape == b.shape;
}

}  // namespace

Journal::Journal(std::string path) : path_(std::move(path)) {
    if (path_.empty()) return;
    enabled_ = true;
    const long long started = static_cast<long long>(std::time(nullptr));
    process_ = std::to_string(static_cast<long long>(getpid())) + "-" + std::to_string(started);
    last_flush_ = std::chrono::steady_clock::now();
}

// At exit: the counts since the last flush.
Journal::~Journal() {
    std::lock_guard<std::mutex> lock(mutex_);
    flush_locked();
}

void Journal::count(const CallInfo &call, Device device, const Selection &selection, double milliseconds) {
    if (!enabled_) return;
    const uint64_t hash = signature_hash(call, device);
    std::lock_guard<std::mutex> lock(mutex_);
    if (!enabled_) return;
    std::vector<Entry> &bucket = entries_[hash];
    Entry *entry = nullptr;
    for (Entry &e : bucket)
        if (e.device == device && same_signature(e.call, call)) entry = &e;
    if (!entry) {
        Entry e;
        e.device = device;
        e.call = call;
        e.signature_json = "\"device\": " + quoted(to_string(device)) + ", \"op\": " + quoted(call.op) +
                           ", \"T\": " + quoted(call.dtype) + ", \"data_format\": " + quoted(call.data_format) +
                           ", \"structure\": " + object(call.structure) + ", \"padding\": " + quoted(call.padding) +
                           explicit_paddings(call) + ", \"shape\": " + object(call.shape) +
                           ", \"tier\": " + quoted(to_string(selection.tier)) + ", \"variant\": " + quoted(selection.name);
        bucket.push_back(std::move(e));
        entry = &bucket.back();
    }
    entry->calls++;
    entry->total_ms += milliseconds;
    entry->dirty = true;
    const auto now = std::chrono::steady_clock::now();
    if (now - last_flush_ >= interval_) {
        flush_locked();
        last_flush_ = now;
        interval_ = std::min<std::chrono::steady_clock::duration>(interval_ * 2, std::chrono::seconds(600));
    }
}

void Journal::flush_locked() {
    if (!enabled_) return;
    std::string lines;
    // In signature order, so that a flush reads the same whatever the hashes.
    std::vector<Entry *> dirty;
    for (auto &[hash, bucket] : entries_)
        for (Entry &e : bucket)
            if (e.dirty) dirty.push_back(&e);
    std::sort(dirty.begin(), dirty.end(),
              [](const Entry *a, const Entry *b) { return a->signature_json < b->signature_json; });
    for (Entry *entry : dirty) {
        Entry &e = *entry;
        char counts[96];
        std::snprintf(counts, sizeof counts, ", \"calls\": %lld, \"total_ms\": %.6g}\n", e.calls, e.total_ms);
        lines += "{\"journal\": 1, \"process\": " + quoted(process_) + ", " + e.signature_json + counts;
        e.dirty = false;
    }
    if (lines.empty()) return;
    const int fd = open(path_.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);  // read: its last byte
    if (fd < 0) return fail(std::strerror(errno));
    // A last line cut short (a crash mid-write): end it, so that ours start
    // on a line of their own.
    struct stat st {};
    char last = '\n';
    if (fstat(fd, &st) == 0 && st.st_size > 0 && pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n')
        lines.insert(0, "\n");
    size_t written = 0;
    while (written < lines.size()) {
        const ssize_t n = write(fd, lines.data() + written, lines.size() - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            const std::string why = n < 0 ? std::strerror(errno) : "nothing written";
            close(fd);
            return fail(why);
        }
        written += static_cast<size_t>(n);
    }
    if (close(fd) != 0) fail(std::strerror(errno));
}

// A journal that cannot be written is reported once and then off: the calls
// themselves go on.
void Journal::fail(const std::string &why) {
    std::fprintf(stderr, "gradtune: GRADTUNE_JOURNAL=%s cannot be written (%s); journalling stops\n", path_.c_str(),
                 why.c_str());
    enabled_ = false;
}

namespace {

Journal &journal() {
    static Journal instance([] {
        const char *path = std::getenv("GRADTUNE_JOURNAL");
        return std::string(path ? path : "");
    }());
    return instance;
}

}  // namespace

bool journal_enabled() {
    static const bool enabled = journal().enabled();
    return enabled;
}

void journal_call(const CallInfo &call, Device device, const Selection &selection, double milliseconds) {
    if (selection.tier == Tier::exact || selection.tier == Tier::forced || selection.tier == Tier::external) return;
    journal().count(call, device, selection, milliseconds);
}

}  // namespace gradtune::internal
