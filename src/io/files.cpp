#include "io/files.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <mutex>
#include <optional>
#include <vector>

#include "util/error.hpp"

namespace attnlab::io {

namespace {
std::string errno_text() { return std::strerror(errno); }

// What a path that is not a regular file is, for messages.
std::string kind_of(mode_t mode) {
  return S_ISFIFO(mode)   ? "a FIFO (named pipe)"
         : S_ISCHR(mode)  ? "a character device"
         : S_ISBLK(mode)  ? "a block device"
         : S_ISSOCK(mode) ? "a socket"
         : S_ISDIR(mode)  ? "a folder"
                          : "not a regular file";
}

// The files this process read (read_text_file) and wrote for the user (write_output_file), by device
// and inode: an output the user names may be neither.
struct SeenFile {
  dev_t dev;
  ino_t ino;
  std::string path;
};
std::mutex g_seen_mutex;
std::vector<SeenFile> g_inputs, g_outputs;

// Whether `f.path` still names the file remembered: a file deleted since may have given its inode
// number to a new one (a test's temporary folder, removed, then another made), which is not the file
// this process read or wrote.
bool still_there(const SeenFile& f) {
  struct stat now{};
  return ::stat(f.path.c_str(), &now) == 0 && now.st_dev == f.dev && now.st_ino == f.ino;
}

void remember(std::vector<SeenFile>& list, const struct stat& st, const std::string& path) {
  const std::lock_guard<std::mutex> lock(g_seen_mutex);
  for (SeenFile& f : list)
    if (f.dev == st.st_dev && f.ino == st.st_ino) {
      if (!still_there(f)) f.path = path;  // the inode was reused: remember the file it is now
      return;
    }
  list.push_back({st.st_dev, st.st_ino, path});
}

std::optional<SeenFile> find_seen(const std::vector<SeenFile>& list, const struct stat& st) {
  const std::lock_guard<std::mutex> lock(g_seen_mutex);
  for (const SeenFile& f : list)
    if (f.dev == st.st_dev && f.ino == st.st_ino && still_there(f)) return f;
  return std::nullopt;
}

std::string human_bytes(std::size_t n) {
  if (n >= (1u << 20)) return std::to_string(n >> 20) + " MiB";
  if (n >= (1u << 10)) return std::to_string(n >> 10) + " KiB";
  return std::to_string(n) + " bytes";
}
}  // namespace

std::string read_text_file(const std::string& path, std::size_t max_bytes) {
  std::string out;
  if (path == "-") {
    char buf[65536];
    std::size_t got;
    while ((got = std::fread(buf, 1, sizeof buf, stdin)) > 0) {
      out.append(buf, got);
      if (out.size() > max_bytes) {
        throw InputError("standard input: more than " + human_bytes(max_bytes) +
                         "; this command reads small problems only");
      }
    }
    return out;
  }
  struct stat st{};
  if (::stat(path.c_str(), &st) != 0) {
    throw InputError(path + ": cannot open (" + errno_text() + "); check the path");
  }
  if (S_ISDIR(st.st_mode)) throw InputError(path + ": is a folder, expected a file");
  // O_NONBLOCK: opening a FIFO must not wait for a writer (it did, forever); the kind is then checked
  // on the open descriptor itself, so a file swapped after the stat() above cannot slip through.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw InputError(path + ": cannot open (" + errno_text() + ")");
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const std::string kind = kind_of(st.st_mode);
    ::close(fd);
    // Reading one could block forever or never end (/dev/zero); "-" reads standard input instead.
    throw InputError(path + ": is " + kind + ", expected a regular file" +
                     (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) ? " (to read a stream, give - and redirect it to standard input)" : ""));
  }
  remember(g_inputs, st, path);
  // A regular file's size is known before reading: refuse an oversized (or sparse) one at once.
  if (st.st_size > 0 && static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    throw InputError(path + ": larger than " + human_bytes(max_bytes) + " (" + human_bytes(static_cast<std::size_t>(st.st_size)) +
                     "); this command reads small problems only");
  }
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  char buf[65536];
  for (;;) {
    const ssize_t got = ::read(fd, buf, sizeof buf);
    if (got < 0) {
      if (errno == EINTR) continue;
      const std::string why = errno_text();
      ::close(fd);
      throw InputError(path + ": cannot read (" + why + ")");
    }
    if (got == 0) break;
    out.append(buf, static_cast<std::size_t>(got));
    if (out.size() > max_bytes) {
      ::close(fd);
      throw InputError(path + ": larger than " + human_bytes(max_bytes) +
                       "; this command reads small problems only");
    }
  }
  ::close(fd);
  return out;
}

std::string check_output_path(const std::string& path, OutputKind kind, const std::string& option) {
  namespace fs = std::filesystem;
  const std::string who = option.empty() ? path : option + " " + path;
  struct stat st{};
  if (::lstat(path.c_str(), &st) != 0) return path;  // a new file (a missing folder shows when it is made)
  std::string target = path;
  const bool link = S_ISLNK(st.st_mode);
  // A file the program keeps as its own (a checkpoint, the progress file): a link there is replaced
  // itself, as always, never the file it names (a run folder's model.ckpt linked to a shipped model
  // would otherwise overwrite that model on --resume).
  if (link && kind == OutputKind::Own) return path;
  if (link) {
    // A symbolic link is followed to the regular file it names, which is replaced (the link stays);
    // anything else behind it is refused like the thing itself. A link to a file that does not exist
    // would create a file somewhere else, and one into /proc (/proc/self/fd/1) names whatever the
    // process has open there: both refused.
    if (::stat(path.c_str(), &st) != 0)
      throw InputError(who + ": is a symbolic link to nothing (" + errno_text() +
                       "); attnlab writes through a link only to an existing regular file: remove the link or give another name");
    // Each link of the chain, and the folder it sits in: /proc/self/fd/1 resolves to whatever stdout
    // is, which canonical() shows as that file's own name.
    fs::path hop = path;
    for (int hops = 0; hops < 40; ++hops) {
      std::error_code hec;
      const fs::path dir = fs::canonical(hop.has_parent_path() ? hop.parent_path() : fs::path("."), hec);
      if (!hec && (dir == "/proc" || dir.string().rfind("/proc/", 0) == 0))
        throw InputError(who + ": is a symbolic link into /proc, which names whatever a process has open there; give the "
                         "name of a new or a regular file");
      if (!fs::is_symlink(fs::symlink_status(hop, hec)) || hec) break;
      const fs::path next = fs::read_symlink(hop, hec);
      if (hec) break;
      hop = next.is_absolute() ? next : dir / next;
    }
    std::error_code ec;
    const fs::path resolved = fs::canonical(path, ec);
    if (ec)
      throw InputError(who + ": is a symbolic link that cannot be followed (" + ec.message() +
                       "); attnlab writes through a link only to an existing regular file: give another name");
    target = resolved.string();
  }
  const std::string is = link ? "links to " : "is ";
  if (S_ISDIR(st.st_mode)) throw InputError(who + ": " + is + "a folder; give a file name inside it");
  if (!S_ISREG(st.st_mode))
    throw InputError(who + ": " + is + kind_of(st.st_mode) +
                     ", not a regular file; attnlab writes only regular files: give the name of a new or a regular file");
  if (kind == OutputKind::User) {
    if (st.st_nlink > 1)
      throw InputError(who + ": " + (link ? "links to a file that has " : "has ") + std::to_string(st.st_nlink) +
                       " names (hard links); a new file there would leave the other names with the old content: give "
                       "another name, or remove the other names first");
    if (const std::optional<SeenFile> in = find_seen(g_inputs, st))
      throw InputError(who + ": " + (in->path == path ? std::string("is") : is + in->path + ",") +
                       " a file this command reads; writing there would replace it: give another name");
    if (const std::optional<SeenFile> out = find_seen(g_outputs, st))
      throw InputError(who + ": " + (out->path == path ? std::string("is") : is + out->path + ",") +
                       " a file this command has just written; give each output a name of its own");
  }
  return target;
}

bool is_input_file(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 && find_seen(g_inputs, st).has_value();
}

void write_output_file(const std::string& path, const std::string& content, const std::string& option) {
  const std::string target = check_output_path(path, OutputKind::User, option);
  write_file_atomic(target, content);
  struct stat st{};
  if (::stat(target.c_str(), &st) == 0) remember(g_outputs, st, path);
}

void write_file_atomic(const std::string& path_in, const std::string& content) {
  namespace fs = std::filesystem;
  // Only a regular file (or a link, replaced itself) is replaced. write_output_file has followed a
  // link of the user's to its file already.
  const std::string path = check_output_path(path_in, OutputKind::Own);
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string name = target.filename().string();
  name.insert(0, 1, '.');
  name.append(".tmp-XXXXXX");
  std::string tmpl = (dir / name).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw RuntimeError(path_in + ": cannot create a temporary file beside it (" + errno_text() + ")");
  auto fail = [&](const std::string& what) {
    const std::string why = errno_text();
    ::close(fd);
    ::unlink(tmpl.c_str());
    throw RuntimeError(path_in + ": " + what + " (" + why + ")");
  };
  std::size_t done = 0;
  while (done < content.size()) {
    const ssize_t put = ::write(fd, content.data() + done, content.size() - done);
    if (put < 0) {
      if (errno == EINTR) continue;
      fail("cannot write");
    }
    done += static_cast<std::size_t>(put);
  }
  if (::fsync(fd) != 0) fail("cannot flush to disk");
  if (::fchmod(fd, 0644) != 0) fail("cannot set permissions");
  if (::close(fd) != 0) {
    ::unlink(tmpl.c_str());
    throw RuntimeError(path_in + ": cannot close (" + errno_text() + ")");
  }
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    const std::string why = errno_text();
    ::unlink(tmpl.c_str());
    throw RuntimeError(path_in + ": cannot replace (" + why + ")");
  }
  // Make the rename itself durable.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

namespace {

void fsync_folder(const std::filesystem::path& dir) {
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace

namespace {
// The file FolderReplacement puts in the folders it sets aside (staging, replaced): what a later run
// may remove as a leftover of its own.
constexpr const char* kStagingMarker = ".attnlab-set-aside";

// Removes a folder this command set aside, its marker last: a kill part-way then leaves a folder that
// still carries the marker, which the next run knows as its own and removes (remove_all alone may
// take the marker first and leave files that no run will claim: kill_corpus, seed 24856169).
void remove_set_aside(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename() != kStagingMarker) fs::remove_all(e.path(), ec);
  fs::remove_all(dir, ec);
}
void mark(const std::string& dir) {
  const int fd = ::open((dir + "/" + kStagingMarker).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd >= 0) ::close(fd);
}
}  // namespace

bool abandoned_folder(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return false;
  const bool free = ::flock(fd, LOCK_EX | LOCK_NB) == 0;
  ::close(fd);  // releases the lock just taken
  return free;
}

FolderReplacement::FolderReplacement(const std::string& path, const std::set<std::string>& replaceable,
                                     const std::string& option) {
  namespace fs = std::filesystem;
  if (path.empty()) throw InputError(option + " needs a folder name");
  std::error_code ec;
  // The path resolved once, as the kernel resolves it (links, then ".."), and used for the check of
  // what the folder holds and for the swap alike: "LINK/../data" is the data folder beside the link's
  // target, and normalising the text instead (dropping "LINK/..") once swapped out and removed a
  // folder that was never checked (the sixth adversarial pass). A link to a folder as the last
  // component is followed too: the folder it points to is replaced, not the link.
  fs::path target = fs::weakly_canonical(fs::absolute(fs::path(path), ec), ec);
  if (ec || target.empty()) throw InputError(option + " " + path + ": cannot resolve the path (" + ec.message() + ")");
  // The folder is swapped for a new one, so a shell whose working folder is it (or inside it) would be
  // left in a folder that no longer exists: `corpus --out .` exited 0 doing that (round three's item 8).
  {
    std::error_code cec;
    const fs::path here = fs::canonical(fs::current_path(cec), cec);
    const fs::path whole = target.lexically_normal();
    if (!cec && !here.empty()) {
      const auto [end_of_target, end_of_here] = std::mismatch(whole.begin(), whole.end(), here.begin(), here.end());
      const bool inside = end_of_target == whole.end() || (std::next(end_of_target) == whole.end() && end_of_target->empty());
      if (inside)
        throw InputError(option + " " + path + ": " + (here == whole ? "is the folder you are in" : "holds the folder you are in") +
                         "; it is replaced as a whole, which would leave you in a folder that no longer exists: give "
                         "another folder, or run the command from outside it");
    }
  }
  if (fs::exists(target, ec)) {
    if (!fs::is_directory(target, ec)) throw InputError(option + " " + path + ": exists and is not a folder");
    for (const auto& e : fs::directory_iterator(target, ec)) {
      const std::string name = e.path().filename().string();
      std::error_code sec;
      // Only plain files of the names this command writes: a user's folder named "train.tsv" is not one.
      const bool plain = e.symlink_status(sec).type() == fs::file_type::regular;
      if ((!replaceable.count(name) && name != kStagingMarker) || !plain)
        throw InputError(option + " " + path + ": holds \"" + name + "\"" + (plain ? "" : " (not a plain file)") +
                         ", which this command did not write; it replaces the " +
                         "whole folder, so give a new or empty folder, or one it wrote before");
    }
    if (ec) throw InputError(option + " " + path + ": cannot list the folder (" + ec.message() + ")");
  }
  target = target.lexically_normal();
  if (!target.has_filename()) target = target.parent_path();
  const fs::path parent = target.parent_path();
  const std::string name = target.filename().string();
  fs::create_directories(parent, ec);
  if (ec) throw InputError(option + " " + path + ": cannot create " + parent.string() + " (" + ec.message() + ")");
  // What a killed run left: staging folders it never committed, replaced folders it never removed.
  // Only folders named exactly as mkdtemp names them (.NAME.new-XXXXXX, .NAME.old-XXXXXX), unlocked,
  // and holding nothing but what this command writes: a user's own ".data.old-2024" full of notes is
  // not ours to remove (an adversarial pass lost two such folders).
  auto mkdtemp_name = [&](const std::string& n, const std::string& prefix) {
    if (n.size() != prefix.size() + 6 || n.rfind(prefix, 0) != 0) return false;
    for (std::size_t i = prefix.size(); i < n.size(); ++i)
      if (!std::isalnum(static_cast<unsigned char>(n[i]))) return false;
    return true;
  };
  // And only those holding the marker file this command puts in each folder it sets aside (a user's
  // own copy of an earlier output named like one, ".data.new-v2try1", was removed: the fifth pass),
  // beside our files and write_file_atomic's half-written ".FILE.tmp-XXXXXX" of them (a SIGKILL while
  // one was written left the folder for good: kill_corpus under ASan). An empty one holds nothing to
  // lose (a kill between mkdtemp and the marker).
  auto half_written = [&](const std::string& n) {
    const std::size_t t = n.rfind(".tmp-");
    if (n.size() < 2 || n[0] != '.' || t == std::string::npos || t < 2 || n.size() != t + 5 + 6) return false;
    for (std::size_t i = t + 5; i < n.size(); ++i)
      if (!std::isalnum(static_cast<unsigned char>(n[i]))) return false;
    return replaceable.count(n.substr(1, t - 1)) > 0;
  };
  auto only_ours = [&](const fs::path& dir) {
    std::error_code lec;
    bool marked = false, empty = true;
    for (const auto& f : fs::directory_iterator(dir, lec)) {
      empty = false;
      const std::string n = f.path().filename().string();
      if (n == kStagingMarker) marked = true;
      else if (!replaceable.count(n) && !half_written(n)) return false;
    }
    return (marked || empty) && !lec;
  };
  for (const auto& e : fs::directory_iterator(parent, ec)) {
    const std::string n = e.path().filename().string();
    if ((mkdtemp_name(n, "." + name + ".new-") || mkdtemp_name(n, "." + name + ".old-")) &&
        !fs::is_symlink(e.symlink_status()) && only_ours(e.path()) && abandoned_folder(e.path().string())) {
      std::error_code rm;
      fs::remove_all(e.path(), rm);
    }
  }
  path_ = target.string();
  std::string tmpl = (parent / ("." + name + ".new-XXXXXX")).string();
  if (!::mkdtemp(tmpl.data()))
    throw InputError(option + " " + path + ": cannot create a staging folder beside it (" + errno_text() + ")");
  staging_ = tmpl;
  lock_fd_ = ::open(staging_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (lock_fd_ >= 0) ::flock(lock_fd_, LOCK_EX | LOCK_NB);
  mark(staging_);
  // mkdtemp makes it 0700; give it what a folder made by mkdir would have.
  const mode_t mask = ::umask(0);
  ::umask(mask);
  ::chmod(staging_.c_str(), 0777 & ~mask);
}

void FolderReplacement::commit() {
  namespace fs = std::filesystem;
  const fs::path parent = fs::path(path_).parent_path();
  // The marker goes before the folder does (it is no output of the command); the replaced folder gets
  // one, so that a kill before it is removed leaves a folder the next run knows as its own.
  std::error_code mec;
  fs::remove(fs::path(staging_) / kStagingMarker, mec);
  if (fs::is_directory(path_, mec)) mark(path_);
  fsync_folder(staging_);
  // Where path exists, swap the two in one step; the old folder ends up under the staging name.
  if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, path_.c_str(), RENAME_EXCHANGE) == 0) {
    committed_ = true;
  } else if (errno == ENOENT) {  // path does not exist: a plain rename creates it
    if (::rename(staging_.c_str(), path_.c_str()) != 0)
      throw RuntimeError(path_ + ": cannot move the new folder into place (" + errno_text() + ")");
    staging_.clear();
    committed_ = true;
  } else if (errno == EINVAL || errno == ENOSYS || errno == ENOTSUP) {
    // A file system without the exchange: move the old folder aside, then the new one in. A kill
    // between the two renames leaves path missing (never mixed), the old folder beside it as
    // .NAME.old-*, and the complete new one as .NAME.new-*.
    std::string leaf = ".";  // (built in steps: GCC 12 warns, wrongly, about "." + string + ...)
    leaf += fs::path(path_).filename().string();
    leaf += ".old-XXXXXX";
    std::string old = (parent / leaf).string();
    if (!::mkdtemp(old.data())) throw RuntimeError(path_ + ": cannot create a folder beside it (" + errno_text() + ")");
    if (::rename(path_.c_str(), old.c_str()) != 0 || ::rename(staging_.c_str(), path_.c_str()) != 0)
      throw RuntimeError(path_ + ": cannot move the new folder into place (" + errno_text() + ")");
    staging_ = old;
    committed_ = true;
  } else {
    throw RuntimeError(path_ + ": cannot move the new folder into place (" + errno_text() + ")");
  }
  fsync_folder(parent);
  if (!staging_.empty()) {  // the replaced folder
    remove_set_aside(staging_);
    staging_.clear();
  }
}

FolderReplacement::~FolderReplacement() {
  if (!staging_.empty()) remove_set_aside(staging_);
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

}  // namespace attnlab::io
