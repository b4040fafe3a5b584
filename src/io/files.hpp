#pragma once
// File input and output with user-facing errors.
#include <cstddef>
#include <string>

namespace attnlab {

// Reads a whole file ("-" = standard input). Throws InputError naming the path when it is missing,
// a directory, unreadable, or larger than max_bytes (so a huge file cannot exhaust memory).
std::string read_text_file(const std::string& path, std::size_t max_bytes);

// Writes `content` to `path` atomically: a temporary file in the same folder, fsync, rename, then
// fsync of the folder. A reader sees either the old file or the complete new one, never a torn one,
// even if the process is killed half-way. Throws RuntimeError on failure (the temp file is removed).
void write_file_atomic(const std::string& path, const std::string& content);

}  // namespace attnlab
