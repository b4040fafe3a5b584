#include "io/files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <iterator>

#include "util/error.hpp"

namespace attnlab {

namespace {
std::string errno_text() { return std::strerror(errno); }

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
    const std::string kind = S_ISFIFO(st.st_mode)  ? "a FIFO (named pipe)"
                             : S_ISCHR(st.st_mode) ? "a character device"
                             : S_ISBLK(st.st_mode) ? "a block device"
                             : S_ISSOCK(st.st_mode) ? "a socket"
                             : S_ISDIR(st.st_mode)  ? "a folder"
                                                    : "not a regular file";
    ::close(fd);
    // Reading one could block forever or never end (/dev/zero); "-" reads standard input instead.
    throw InputError(path + ": is " + kind + ", expected a regular file" +
                     (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode) ? " (to read a stream, give - and redirect it to standard input)" : ""));
  }
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

void write_file_atomic(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string name = target.filename().string();
  name.insert(0, 1, '.');
  name.append(".tmp-XXXXXX");
  std::string tmpl = (dir / name).string();
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) throw RuntimeError(path + ": cannot create a temporary file beside it (" + errno_text() + ")");
  auto fail = [&](const std::string& what) {
    const std::string why = errno_text();
    ::close(fd);
    ::unlink(tmpl.c_str());
    throw RuntimeError(path + ": " + what + " (" + why + ")");
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
    throw RuntimeError(path + ": cannot close (" + errno_text() + ")");
  }
  if (::rename(tmpl.c_str(), path.c_str()) != 0) {
    const std::string why = errno_text();
    ::unlink(tmpl.c_str());
    throw RuntimeError(path + ": cannot replace (" + why + ")");
  }
  // Make the rename itself durable.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace attnlab
