#pragma once
// File input and output with user-facing errors.
#include <cstddef>
#include <set>
#include <string>

namespace attnlab::io {

// Reads a whole file ("-" = standard input). Throws InputError naming the path when it is missing,
// a directory, unreadable, or larger than max_bytes (so a huge file cannot exhaust memory).
std::string read_text_file(const std::string& path, std::size_t max_bytes);

// Writes `content` to `path` atomically: a temporary file in the same folder, fsync, rename, then
// fsync of the folder. A reader sees either the old file or the complete new one, never a torn one,
// even if the process is killed half-way. Throws RuntimeError on failure (the temp file is removed).
void write_file_atomic(const std::string& path, const std::string& content);

// True when no live process holds an flock on the folder `dir` (its owner, which held one while it
// worked, was killed): the test FolderReplacement and `check`'s build folders use to clean up after
// a killed run without touching the folder of one still running.
bool abandoned_folder(const std::string& dir);

// Replaces a whole folder at once, for output that is a set of files which must agree (a corpus's
// splits and vocabularies): the files are written into a hidden staging folder beside it
// (".NAME.new-XXXXXX"), and commit() puts that folder in the place of `path` in one rename (an
// atomic exchange where `path` already exists). A reader, or a process killed at any point, sees the
// old folder or the complete new one, never a mix. Until commit(), the destructor removes the
// staging folder (an error, a Ctrl-C); staging and replaced folders that a killed process left
// behind are removed by the next FolderReplacement of the same path (each live one holds a lock on
// its staging folder, so two at once do not remove each other's).
//
// An existing `path` may hold only entries named in `replaceable` (it is replaced as a whole, so
// anything else would be lost): otherwise InputError naming the first other entry. `option` names
// the flag in messages ("--out").
class FolderReplacement {
 public:
  FolderReplacement(const std::string& path, const std::set<std::string>& replaceable, const std::string& option);
  ~FolderReplacement();
  FolderReplacement(const FolderReplacement&) = delete;
  FolderReplacement& operator=(const FolderReplacement&) = delete;

  const std::string& staging() const { return staging_; }  // write the files here
  void commit();                                            // then put them in place

 private:
  std::string path_, staging_;
  int lock_fd_ = -1;
  bool committed_ = false;
};

}  // namespace attnlab::io
