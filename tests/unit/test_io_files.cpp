// io/files.hpp: reading files with clear errors, atomic writes (write_file_atomic), abandoned_folder and
// FolderReplacement, on what they promise: a reader sees the old file or the whole new one, never a torn
// one, also when the writer is killed between its write and its rename, the disk is full or the folder
// is read-only; a failure says which file and why.
//
// The killed, full-disk and read-only cases are ctest tests of their own (unit.io_files.*, see
// tests/CMakeLists.txt): they need ptrace and, as root, a private mount namespace with a small tmpfs,
// and skip (exit 77) where those are missing, except under CI=true, where they fail.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "io/files.hpp"
#include "util/error.hpp"

namespace io_files_test {

namespace fs = std::filesystem;

// A fresh folder under the temporary folder, removed at the end.
struct TempFolder {
  fs::path path;
  TempFolder() {
    std::string tmpl = (fs::temp_directory_path() / "attnlab-io-files-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~TempFolder() {
    std::error_code ec;
    fs::permissions(path, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(path, ec);
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void put(const fs::path& p, const std::string& text) {
  std::ofstream(p, std::ios::binary) << text;
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// write_file_atomic's temporary name for NAME: ".NAME.tmp-" and six letters or digits (mkstemp's).
bool is_temporary_of(const std::string& leftover, const std::string& name) {
  const std::string prefix = "." + name + ".tmp-";
  if (leftover.size() != prefix.size() + 6 || leftover.rfind(prefix, 0) != 0) return false;
  return std::all_of(leftover.begin() + static_cast<std::ptrdiff_t>(prefix.size()), leftover.end(),
                     [](unsigned char c) { return std::isalnum(c) != 0; });
}

std::string error_of(const std::string& path, const std::string& content) {
  try {
    attnlab::io::write_file_atomic(path, content);
  } catch (const attnlab::RuntimeError& e) {
    return e.what();
  }
  return "";
}

// A private mount namespace for this process (this test case runs alone in its process: ctest's
// unit.io_files.* tests), so a tmpfs mounted here is gone when the process ends, however it ends.
// Empty when that worked, else why not.
std::string private_mounts() {
  if (::geteuid() != 0) return "mounting a small tmpfs needs root";
  if (::unshare(CLONE_NEWNS) != 0) return std::string("cannot make a private mount namespace (") + std::strerror(errno) + ")";
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    return std::string("cannot make the mounts private (") + std::strerror(errno) + ")";
  return "";
}


TEST_CASE("write_file_atomic creates, replaces, and leaves nothing else behind") {
  TempFolder t;
  const fs::path file = t.path / "model.json";
  attnlab::io::write_file_atomic(file.string(), "first\n");
  CHECK(slurp(file) == "first\n");
  attnlab::io::write_file_atomic(file.string(), std::string(3u << 20, 'x'));  // bigger than one write() may take
  CHECK(slurp(file) == std::string(3u << 20, 'x'));
  attnlab::io::write_file_atomic(file.string(), "");
  CHECK(slurp(file).empty());
  CHECK(names_in(t.path) == std::vector<std::string>{"model.json"});
  // Readable by others, as a file made by an editor would be (mkstemp's own mode is 0600).
  CHECK((fs::status(file).permissions() & fs::perms::others_read) != fs::perms::none);
}

TEST_CASE("write_file_atomic into a folder that does not exist names the file and the reason") {
  TempFolder t;
  const std::string file = (t.path / "no-such-folder" / "out.json").string();
  const std::string what = error_of(file, "x");
  CHECK(what.rfind(file + ": cannot create a temporary file beside it (", 0) == 0);
  CHECK(what.find("No such file or directory") != std::string::npos);
  CHECK_FALSE(fs::exists(t.path / "no-such-folder"));
}

TEST_CASE("write_file_atomic onto a folder is refused before anything is written, and leaves the folder") {
  TempFolder t;
  fs::create_directory(t.path / "taken");
  put(t.path / "taken" / "inside", "kept");
  const std::string taken = (t.path / "taken").string();
  CHECK_THROWS_WITH_AS(attnlab::io::write_file_atomic(taken, "new"), (taken + ": is a folder; give a file name inside it").c_str(),
                       attnlab::InputError);
  CHECK(names_in(t.path) == std::vector<std::string>{"taken"});
  CHECK(slurp(t.path / "taken" / "inside") == "kept");
}

TEST_CASE("only regular files are replaced: a FIFO, a device, a link into /proc or to nothing is refused, naming it") {
  // Round three's item 2: --html /dev/full as root replaced the system's /dev/full with a page.
  TempFolder t;
  using attnlab::io::OutputKind;
  using attnlab::io::check_output_path;
  const std::string fifo = (t.path / "pipe").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_THROWS_WITH_AS(check_output_path(fifo, OutputKind::Own), doctest::Contains("pipe: is a FIFO (named pipe), not a regular file"),
                       attnlab::InputError);
  CHECK_THROWS_WITH_AS(attnlab::io::write_output_file("/dev/null", "x", "--html"),
                       "--html /dev/null: is a character device, not a regular file; attnlab writes only regular files: give the "
                       "name of a new or a regular file",
                       attnlab::InputError);
  const fs::path to_stdout = t.path / "out.html", dangling = t.path / "gone.html";
  fs::create_symlink("/proc/self/fd/1", to_stdout);
  CHECK_THROWS_WITH_AS(check_output_path(to_stdout.string(), OutputKind::User), doctest::Contains("is a symbolic link into /proc"),
                       attnlab::InputError);
  fs::create_symlink(t.path / "nowhere", dangling);
  CHECK_THROWS_WITH_AS(check_output_path(dangling.string(), OutputKind::User), doctest::Contains("is a symbolic link to nothing"),
                       attnlab::InputError);
  CHECK(check_output_path(dangling.string(), OutputKind::Own) == dangling.string());  // the program's own: the link itself
  CHECK(names_in(t.path) == std::vector<std::string>{"gone.html", "out.html", "pipe"});
  CHECK(check_output_path((t.path / "new.html").string(), OutputKind::User) == (t.path / "new.html").string());
}

TEST_CASE("a symbolic link the user names is followed to the regular file it names; one of the program's own is replaced") {
  TempFolder t;
  fs::create_directory(t.path / "docs");
  put(t.path / "docs" / "mine.html", "old\n");
  fs::create_symlink("docs/mine.html", t.path / "link.html");
  attnlab::io::write_output_file((t.path / "link.html").string(), "new\n", "--html");
  CHECK(fs::is_symlink(fs::symlink_status(t.path / "link.html")));
  CHECK(slurp(t.path / "docs" / "mine.html") == "new\n");
  CHECK(names_in(t.path / "docs") == std::vector<std::string>{"mine.html"});
  // A checkpoint linked to a shipped model: the link is replaced, the model kept.
  put(t.path / "docs" / "shipped.ckpt", "shipped\n");
  fs::create_symlink("docs/shipped.ckpt", t.path / "model.ckpt");
  attnlab::io::write_file_atomic((t.path / "model.ckpt").string(), "trained\n");
  CHECK(!fs::is_symlink(fs::symlink_status(t.path / "model.ckpt")));
  CHECK(slurp(t.path / "model.ckpt") == "trained\n");
  CHECK(slurp(t.path / "docs" / "shipped.ckpt") == "shipped\n");
}

TEST_CASE("a file the user names is never a hard link, nor a file this process read or wrote; the program's own may be split") {
  TempFolder t;
  using attnlab::io::OutputKind;
  put(t.path / "a.html", "mine\n");
  fs::create_hard_link(t.path / "a.html", t.path / "b.html");
  const std::string b = (t.path / "b.html").string();
  CHECK_THROWS_WITH_AS(attnlab::io::write_output_file(b, "page", "--html"), doctest::Contains("has 2 names (hard links)"),
                       attnlab::InputError);
  CHECK(slurp(t.path / "a.html") == "mine\n");
  attnlab::io::write_file_atomic(b, "state\n");  // a checkpoint of the program's own: the link is split
  CHECK(slurp(t.path / "a.html") == "mine\n");
  CHECK(slurp(t.path / "b.html") == "state\n");
  // An input of this process, by any name (here through a link).
  put(t.path / "model.ckpt", "weights");
  CHECK(attnlab::io::read_text_file((t.path / "model.ckpt").string(), 100) == "weights");
  CHECK(attnlab::io::is_input_file((t.path / "model.ckpt").string()));
  fs::create_symlink("model.ckpt", t.path / "page.html");
  CHECK_THROWS_WITH_AS(attnlab::io::write_output_file((t.path / "page.html").string(), "page", "--html"),
                       doctest::Contains(("links to " + (t.path / "model.ckpt").string() + ", a file this command reads").c_str()),
                       attnlab::InputError);
  CHECK(slurp(t.path / "model.ckpt") == "weights");
  // A file written for the user once in this run is not written again under another option.
  attnlab::io::write_output_file((t.path / "x.html").string(), "page", "--html");
  CHECK_THROWS_WITH_AS(attnlab::io::write_output_file((t.path / "x.html").string(), "svg", "--svg"),
                       doctest::Contains(("--svg " + (t.path / "x.html").string() + ": is a file this command has just written").c_str()),
                       attnlab::InputError);
  // What is remembered is the file, not its inode number: once x.html's name no longer leads to it
  // (moved away here; deleted, its number may go to a new file), another file there is not that one.
  // (Under ASan a new file took the number of a deleted test folder's file, and was refused as it.)
  fs::rename(t.path / "x.html", t.path / "moved.html");
  CHECK_NOTHROW(attnlab::io::write_output_file((t.path / "moved.html").string(), "again", "--html"));
  CHECK(slurp(t.path / "moved.html") == "again");
}

TEST_CASE("write_file_atomic killed between writing and renaming leaves the old file whole") {
#if defined(__x86_64__)
  // The child writes the new content with write_file_atomic under ptrace; at the entry of its rename
  // system call (the new file written and flushed, not yet in place) it is killed with SIGKILL.
  TempFolder t;
  const fs::path file = t.path / "progress.json";
  const std::string old_text = "{\"old\": true}\n", new_text(1u << 20, 'n');
  put(file, old_text);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    if (::ptrace(PTRACE_TRACEME, 0, nullptr, nullptr) != 0) ::_exit(3);
    ::raise(SIGSTOP);
    try {
      attnlab::io::write_file_atomic(file.string(), new_text);
    } catch (...) {
      ::_exit(4);
    }
    ::_exit(0);
  }
  struct KillAtEnd {  // a failed REQUIRE below must not leave the child stopped
    pid_t pid;
    ~KillAtEnd() {
      if (pid > 0 && ::kill(pid, SIGKILL) == 0) ::waitpid(pid, nullptr, 0);
    }
  } kill_at_end{pid};
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 3) ATTNLAB_SKIP("ptrace is not permitted here");
  REQUIRE(WIFSTOPPED(status));
  REQUIRE(::ptrace(PTRACE_SETOPTIONS, pid, nullptr, PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL) == 0);
  bool killed = false;
  while (!killed) {
    REQUIRE(::ptrace(PTRACE_SYSCALL, pid, nullptr, nullptr) == 0);
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE_MESSAGE(WIFSTOPPED(status), "the writer ended before it renamed: status " << status);
    if (WSTOPSIG(status) != (SIGTRAP | 0x80)) continue;
    user_regs_struct regs{};
    REQUIRE(::ptrace(PTRACE_GETREGS, pid, nullptr, &regs) == 0);
    const long nr = static_cast<long>(regs.orig_rax);
    if (nr == SYS_rename || nr == SYS_renameat || nr == SYS_renameat2) {
      ::kill(pid, SIGKILL);
      killed = true;
    }
  }
  REQUIRE(::waitpid(pid, &status, 0) == pid);
  kill_at_end.pid = -1;
  CHECK(WIFSIGNALED(status));
  // The reader sees the old file, whole.
  CHECK(slurp(file) == old_text);
  // Beside it, the new content complete under a hidden temporary name: killed after the write, before
  // the rename, as intended; no reader takes ".progress.json.tmp-XXXXXX" for progress.json.
  const auto names = names_in(t.path);
  REQUIRE(names.size() == 2);
  CHECK(names[1] == "progress.json");
  CHECK(is_temporary_of(names[0], "progress.json"));
  CHECK(slurp(t.path / names[0]) == new_text);
  // The next write succeeds. (The killed run's temporary file stays: nothing removes it.)
  attnlab::io::write_file_atomic(file.string(), "next\n");
  CHECK(slurp(file) == "next\n");
#else
  ATTNLAB_SKIP_EVEN_IN_CI("the system call stop reads x86-64 registers");
#endif
}

TEST_CASE("write_file_atomic on a full disk says so, keeps the old file and removes its temporary file") {
  const std::string why = private_mounts();
  if (!why.empty()) ATTNLAB_SKIP(why);
  TempFolder t;
  const fs::path disk = t.path / "disk";
  fs::create_directory(disk);
  if (::mount("tmpfs", disk.c_str(), "tmpfs", 0, "size=64k") != 0)
    ATTNLAB_SKIP("cannot mount a tmpfs here (" << std::strerror(errno) << ")");
  const fs::path file = disk / "state.json";
  put(file, "old\n");
  const std::string what = error_of(file.string(), std::string(1u << 20, 'z'));
  CHECK(what.rfind(file.string() + ": ", 0) == 0);
  CHECK(what.find("No space left on device") != std::string::npos);
  CHECK(slurp(file) == "old\n");
  CHECK(names_in(disk) == std::vector<std::string>{"state.json"});
  ::umount2(disk.c_str(), MNT_DETACH);
}

TEST_CASE("write_file_atomic into a read-only folder fails with the reason, and creates nothing") {
  TempFolder t;
  const fs::path dir = t.path / "ro";
  fs::create_directory(dir);
  put(dir / "kept.json", "old\n");
  std::string reason;
  if (::geteuid() == 0) {
    // Root writes through permission bits: make the folder a read-only mount instead.
    const std::string why = private_mounts();
    if (!why.empty()) ATTNLAB_SKIP(why);
    if (::mount(dir.c_str(), dir.c_str(), nullptr, MS_BIND, nullptr) != 0 ||
        ::mount(nullptr, dir.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) != 0)
      ATTNLAB_SKIP("cannot bind-mount a folder read-only here (" << std::strerror(errno) << ")");
    reason = "Read-only file system";
  } else {
    fs::permissions(dir, fs::perms::owner_read | fs::perms::owner_exec);
    reason = "Permission denied";
  }
  const std::string what = error_of((dir / "kept.json").string(), "new\n");
  CHECK(what == (dir / "kept.json").string() + ": cannot create a temporary file beside it (" + reason + ")");
  CHECK(slurp(dir / "kept.json") == "old\n");
  CHECK(names_in(dir) == std::vector<std::string>{"kept.json"});
  if (::geteuid() == 0) ::umount2(dir.c_str(), MNT_DETACH);
  fs::permissions(dir, fs::perms::owner_all);
}

TEST_CASE("read_text_file: missing, a folder, a FIFO, too large: InputError naming the path") {
  TempFolder t;
  auto error = [](const std::string& path, std::size_t max) -> std::string {
    try {
      attnlab::io::read_text_file(path, max);
    } catch (const attnlab::InputError& e) {
      return e.what();
    }
    return "";
  };
  const std::string missing = (t.path / "nope.json").string();
  CHECK(error(missing, 100).rfind(missing + ": cannot open (No such file or directory)", 0) == 0);
  CHECK(error(t.path.string(), 100) == t.path.string() + ": is a folder, expected a file");
  const std::string fifo = (t.path / "pipe").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(error(fifo, 100).rfind(fifo + ": is a FIFO (named pipe), expected a regular file", 0) == 0);
  const fs::path big = t.path / "big.json";
  put(big, std::string(2048, 'b'));
  CHECK(error(big.string(), 1024) == big.string() + ": larger than 1 KiB (2 KiB); this command reads small problems only");
  CHECK(attnlab::io::read_text_file(big.string(), 2048) == std::string(2048, 'b'));
}

TEST_CASE("abandoned_folder: true only for a folder no live process holds a lock on") {
  TempFolder t;
  const fs::path dir = t.path / "run";
  fs::create_directory(dir);
  CHECK(attnlab::io::abandoned_folder(dir.string()));
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  REQUIRE(fd >= 0);
  REQUIRE(::flock(fd, LOCK_EX) == 0);
  // flock locks belong to the open file description: another description (the function's own) is refused.
  CHECK_FALSE(attnlab::io::abandoned_folder(dir.string()));
  ::close(fd);
  CHECK(attnlab::io::abandoned_folder(dir.string()));
  CHECK_FALSE(attnlab::io::abandoned_folder((t.path / "missing").string()));
}

TEST_CASE("FolderReplacement: commit puts the new folder in place; without commit nothing changes") {
  TempFolder t;
  const fs::path out = t.path / "corpus";
  {
    attnlab::io::FolderReplacement r(out.string(), {"train.tsv"}, "--out");
    put(fs::path(r.staging()) / "train.tsv", "one\n");
    r.commit();
  }
  CHECK(slurp(out / "train.tsv") == "one\n");
  CHECK(names_in(out) == std::vector<std::string>{"train.tsv"});
  {
    attnlab::io::FolderReplacement r(out.string(), {"train.tsv"}, "--out");
    put(fs::path(r.staging()) / "train.tsv", "two\n");
  }  // not committed (an error, a Ctrl-C): the old folder stays, the staging folder goes
  CHECK(slurp(out / "train.tsv") == "one\n");
  CHECK(names_in(t.path) == std::vector<std::string>{"corpus"});
  put(out / "notes.txt", "mine");
  CHECK_THROWS_AS(attnlab::io::FolderReplacement(out.string(), {"train.tsv"}, "--out"), attnlab::InputError);
}

}  // namespace io_files_test
