#include "render/prompt.hpp"

#include <signal.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <iostream>

namespace attnlab::render {

bool stdin_and_stdout_are_terminals() { return ::isatty(STDIN_FILENO) == 1 && ::isatty(STDOUT_FILENO) == 1; }

namespace {

// The terminal's settings before the raw read, and the raw ones, for the signal handlers below: every
// way out of the wait gives the terminal back as it was (round three's item 5: Ctrl-C at the prompt
// left it without echo and line mode, and so did Ctrl-\ and Ctrl-Z then fg).
termios g_cooked{}, g_raw{};
volatile sig_atomic_t g_in_raw = 0;

// The signals that end the program (Ctrl-C, Ctrl-\, a kill, a closed terminal) and the stop (Ctrl-Z)
// and its continuation.
constexpr int kEndSignals[] = {SIGINT, SIGQUIT, SIGTERM, SIGHUP};
struct sigaction g_old_end[4]{}, g_old_tstp{}, g_old_cont{};

// Ends the program: the terminal as it was, then the signal's own default action (dying of SIGINT, as
// before, so the shell sees an interrupted command). tcsetattr, sigaction and raise are async-signal-safe.
extern "C" void attnlab_prompt_on_end(int sig) {
  if (g_in_raw) ::tcsetattr(STDIN_FILENO, TCSANOW, &g_cooked);
  struct sigaction dfl{};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  sigset_t unblock;
  sigemptyset(&unblock);
  sigaddset(&unblock, sig);
  ::sigprocmask(SIG_UNBLOCK, &unblock, nullptr);
  ::raise(sig);
}

// Ctrl-Z: the shell gets the terminal back as it was, the program stops; on `fg` the raw mode returns.
extern "C" void attnlab_prompt_on_stop(int) {
  const int saved = errno;
  if (g_in_raw) ::tcsetattr(STDIN_FILENO, TCSANOW, &g_cooked);
  struct sigaction dfl{}, mine{};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(SIGTSTP, &dfl, &mine);
  sigset_t unblock;
  sigemptyset(&unblock);
  sigaddset(&unblock, SIGTSTP);
  ::sigprocmask(SIG_UNBLOCK, &unblock, nullptr);
  ::raise(SIGTSTP);  // stops here until SIGCONT
  ::sigaction(SIGTSTP, &mine, nullptr);
  if (g_in_raw) ::tcsetattr(STDIN_FILENO, TCSANOW, &g_raw);
  errno = saved;
}

// SIGCONT without a stop of ours (SIGSTOP, then a continue): the shell may have set the terminal back
// meanwhile; put the raw mode back while the prompt waits.
extern "C" void attnlab_prompt_on_continue(int) {
  const int saved = errno;
  if (g_in_raw) ::tcsetattr(STDIN_FILENO, TCSANOW, &g_raw);
  errno = saved;
}

void install(int sig, void (*handler)(int), struct sigaction* old) {
  ::sigaction(sig, nullptr, old);
  // A signal the program was started ignoring (a background job's SIGINT and SIGQUIT) stays ignored.
  if (old->sa_handler == SIG_IGN) return;
  struct sigaction sa{};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  ::sigaction(sig, &sa, nullptr);
}

}  // namespace

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
    g_cooked = old;
    g_raw = t;
    for (int i = 0; i < 4; ++i) install(kEndSignals[i], attnlab_prompt_on_end, &g_old_end[i]);
    install(SIGTSTP, attnlab_prompt_on_stop, &g_old_tstp);
    install(SIGCONT, attnlab_prompt_on_continue, &g_old_cont);
    g_in_raw = 1;
    ::tcsetattr(STDIN_FILENO, TCSANOW, &t);
  }
  char c = 0;
  ssize_t got = 0;
  do {
    got = ::read(STDIN_FILENO, &c, 1);
  } while (got < 0 && errno == EINTR);
  if (raw) {
    ::tcsetattr(STDIN_FILENO, TCSANOW, &old);
    g_in_raw = 0;
    for (int i = 0; i < 4; ++i) ::sigaction(kEndSignals[i], &g_old_end[i], nullptr);
    ::sigaction(SIGTSTP, &g_old_tstp, nullptr);
    ::sigaction(SIGCONT, &g_old_cont, nullptr);
  }

  if (color) std::cout << "\r\x1b[2K";
  else std::cout << '\n';
  std::cout << '\n';
  std::cout.flush();
  return got == 1 ? static_cast<unsigned char>(c) : -1;
}

}  // namespace attnlab::render
