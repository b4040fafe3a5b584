#pragma once
// Keyboard input from the terminal: whether someone is there to answer a prompt, and the wait for one
// key. The one place attnlab reads the terminal (the lessons' "[Enter] next step" pause uses it), kept
// beside terminal.hpp, which knows what the output side can do.
#include <string>

namespace attnlab::render {

// True when stdin and stdout are both terminals: a person can see a prompt and press a key. False
// under a pipe, a redirect or a CI job, where waiting would hang.
bool stdin_and_stdout_are_terminals();

// Prints `prompt` on stdout (in reverse video when `color`), waits for one key on stdin (raw mode for
// the duration of the read only, so the key is neither echoed nor held for a whole line), then clears
// the prompt line (colour) or ends it (no colour) and prints an empty line. Returns the key's byte
// (0 to 255), or -1 at the end of input or on a read error. Every way out gives the terminal back as it
// was: Ctrl-C, Ctrl-\, SIGTERM and SIGHUP restore it and then end the program by the signal, as
// before; Ctrl-Z restores it before the stop and sets the raw mode again on `fg` (tests/cli/
// test_lessons_cli.cpp checks ECHO and ICANON on a pseudo-terminal after each).
int wait_for_key(const std::string& prompt, bool color);

}  // namespace attnlab::render
