// The per-process file a fuzz target writes each input to, for readers that
// take a path; removed when the process exits.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdio>
#include <fstream>
#include <string>

class InputFile {
public:
    explicit InputFile(const std::string &name)
        : path_("/tmp/gradtune-fuzz-" + std::to_string(getpid()) + "-" + name) {}
    ~InputFile() { std::remove(path_.c_str()); }
    InputFile(const InputFile &) = delete;
    InputFile &operator=(const InputFile &) = delete;

    // Replaces the file's contents; returns its path.
    const std::string &write(const void *data, size_t size) {
        std::ofstream(path_, std::ios::binary | std::ios::trunc)
            .write(static_cast<const char *>(data), static_cast<std::streamsize>(size));
        return path_;
    }

private:
    std::string path_;
};
