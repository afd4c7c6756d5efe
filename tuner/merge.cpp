#include "merge.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <tuple>

#include "records.h"  // target_class, write_file_atomically
#include "trials.h"

namespace gradtune::tooling {

namespace {

using nlohmann::json;

struct Line {
    std::string timestamp, text;
    bool operator<(const Line &o) const { return std::tie(timestamp, text) < std::tie(o.timestamp, o.text); }
};

}  // namespace

int merge(const MergeOptions &options) {
    std::map<std::string, Line> kept;          // measurement key -> earliest line
    std::map<std::string, size_t> per_class;   // target class -> trials
    size_t read = 0;
    for (const std::string &path : options.inputs) {
        std::ifstream in(path);
        if (!in) {
            std::cerr << "gradtune merge: " << path << ": cannot be read; nothing written\n";
            return 2;
        }
        size_t malformed = 0, lines = 0;
        for (std::string line; std::getline(in, line);) {
            if (line.empty()) continue;
            Trial t;
            try {
                t = trial_from_json(json::parse(line));
            } catch (const std::exception &) {
                malformed++;  // a line cut short by a kill or a full disk
                continue;
            }
            lines++;
            per_class[target_class(t.target)]++;
            // The log's own JSON form: the same trial reads back the same
            // bytes whichever tool or version wrote its line.
            Line l{t.timestamp, to_json(t).dump()};
            auto [it, inserted] = kept.emplace(t.measurement_key(), l);
            if (!inserted && l < it->second) it->second = l;
        }
        read += lines;
        std::cerr << "gradtune merge: " << path << ": " << lines << " trial(s)";
        if (malformed) std::cerr << ", " << malformed << " malformed line(s) skipped";
        std::cerr << "\n";
    }
    if (per_class.size() > 1 && !options.mixed_classes) {
        std::cerr << "gradtune merge: the logs hold trials of " << per_class.size() << " target classes (";
        bool first = true;
        for (const auto &[klass, count] : per_class) {
            std::cerr << (first ? "" : ", ") << klass << ": " << count;
            first = false;
        }
        std::cerr << "); a trials log is one class's (distill reads only its own machine's class). "
                     "Pass --mixed-classes to merge them anyway; nothing written\n";
        return 2;
    }
    std::vector<Line> lines;
    lines.reserve(kept.size());
    for (const auto &[key, line] : kept) lines.push_back(line);
    std::sort(lines.begin(), lines.end());
    std::string text;
    for (const Line &l : lines) text += l.text + "\n";
    try {
        write_file_atomically(options.output, text);
    } catch (const std::exception &e) {
        std::cerr << "gradtune merge: " << e.what() << "; nothing written\n";
        return 2;
    }
    std::cerr << "gradtune merge: " << lines.size() << " trial(s) -> " << options.output << " (" << read - lines.size()
              << " duplicate(s) dropped)\n";
    return 0;
}

}  // namespace gradtune::tooling
