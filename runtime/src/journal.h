// The shape journal: with GRADTUNE_JOURNAL=path, every call that no exact
// record served (tier transferred, nearest, default or generic) is counted
// per call signature (device, op, dtype, layout, structure, padding, shape),
// and the counts are appended to `path` as JSON lines, so that
// `gradtune tune --from-journal path` can tune exactly the shapes an
// application runs. One line per signature and flush:
//   {"journal": 1, "process": "<pid>-<start>", "device": "cpu", "op": ...,
//    "T": ..., "data_format": ..., "structure": {...}, "padding": ...,
//    "shape": {...}, "tier": ..., "variant": ..., "calls": N, "total_ms": X}
// Counts are the process's totals so far: a reader keeps the last line of
// each (process, signature) and sums over processes. Lines are written at
// exit and by a call that finds the last flush older than the flush interval
// (5 s, doubling up to 10 min: a long run writes a few dozen lines per
// signature). Each flush is one append (O_APPEND, one write) of whole lines;
// a line cut by a crash is closed off by the next flush and skipped by
// readers. Forced variants and external kernels (the tuner's own
// measurements) are not journalled. Unset: one cached getenv per process.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "dispatch.h"

namespace gradtune::internal {

// Whether GRADTUNE_JOURNAL is set (read once), and the call's count into it.
bool journal_enabled();
void journal_call(const CallInfo &call, Device device, const Selection &selection, double milliseconds);

// The journal behind them, one per process; the benchmark times its own
// instance to report the bookkeeping's cost per call.
class Journal {
public:
    explicit Journal(std::string path);  // empty: disabled
    ~Journal();                          // flushes
    Journal(const Journal &) = delete;
    Journal &operator=(const Journal &) = delete;

    bool enabled() const { return enabled_; }
    void count(const CallInfo &call, Device device, const Selection &selection, double milliseconds);

private:
    struct Entry {
        Device device;
        CallInfo call;
        std::string signature_json;  // everything of the line but the counts
        long long calls = 0;
        double total_ms = 0;
        bool dirty = false;  // counted since the last flush
    };
    void flush_locked();
    void fail(const std::string &why);

    std::mutex mutex_;
    std::atomic<bool> enabled_{false};  // false for good after a failed write
    std::string path_, process_;
    // By a hash of the signature (computed without allocating: the count is
    // on every call's path), then compared field by field.
    std::unordered_map<uint64_t, std::vector<Entry>> entries_;
    std::chrono::steady_clock::time_point last_flush_;
    std::chrono::steady_clock::duration interval_ = std::chrono::seconds(5);
};

}  // namespace gradtune::internal
