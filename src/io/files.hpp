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
//
// Only a regular file is ever replaced (check_output_path below): a folder, device, FIFO or socket at
// `path` is refused with InputError naming it; a symbolic link there is replaced itself, never the
// file it names. This is for the files a command keeps as its own (checkpoints, logs, progress); a
// file the user named goes through write_output_file, which follows a link instead.
void write_file_atomic(const std::string& path, const std::string& content);

// Writes a file the user named with `option` (--html, --svg, --json-out): write_file_atomic after
// check_output_path with the rules for such files, which also refuse a file with more than one name
// (a hard link: the new file would split it from its other names) and a file this command has read
// (an input: `attend --model run --html run/model.ckpt` would have put a page where the checkpoint
// was), and a file this command wrote already (`--html x --svg x`).
void write_output_file(const std::string& path, const std::string& content, const std::string& option);

enum class OutputKind {
  Own,   // a file the command keeps as its own: a link there is replaced itself; hard links may be split
  User,  // a file the user named: a link is followed to the regular file it names; no hard link, no
         // input of this command, no file written before in the same run
};

// The one check of a place to write, shared by write_file_atomic, write_output_file and the options'
// validators (so a bad --html costs nothing before a long tour): returns the path to write, `path`
// itself or, for OutputKind::User, the regular file a symbolic link at `path` names. A path that does not exist yet is fine
// (whether its folder is writable shows when the file is made). Throws InputError "PATH: is a
// character device, not a regular file; ..." (prefixed with `option` and a space when given).
std::string check_output_path(const std::string& path, OutputKind kind, const std::string& option = "");

// The files this process has read with read_text_file, by device and inode: what check_output_path
// refuses for OutputKind::User. (Exposed for tests.)
bool is_input_file(const std::string& path);

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
