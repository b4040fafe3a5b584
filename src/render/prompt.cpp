#include "render/prompt.hpp"

#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <iostream>

namespace attnlab::render {

bool stdin_and_stdout_are_terminals() { return ::isatty(STDIN_FILENO) == 1 && ::isatty(STDOUT_FILENO) == 1; }

int wait_for_key(const std::string& prompt, bool color) {
  if (color) std::cout << "\x1b[7m" << prompt << "\x1b[0m";
  else std::cout << prompt;
  std::cout.flush();

  termios old{};
  const bool raw = ::tcgetattr(STDIN_FILENO, &old) == 0;
  if (raw) {
    termios t = old;
    t.c_lflag &= static_cast<tcflag_t>(~(ICANON | ECHO));
    t.c_cc[VMIN] = 1;
    t.c_cc[VTIME] = 0;
    ::tcsetattr(STDIN_FILENO, TCSANOW, &t);
  }
  char c = 0;
  ssize_t got = 0;
  do {
    got = ::read(STDIN_FILENO, &c, 1);
  } while (got < 0 && errno == EINTR);
  if (raw) ::tcsetattr(STDIN_FILENO, TCSANOW, &old);

  if (color) std::cout << "\r\x1b[2K";
  else std::cout << '\n';
  std::cout << '\n';
  std::cout.flush();
  return got == 1 ? static_cast<unsigned char>(c) : -1;
}

}  // namespace attnlab::render
