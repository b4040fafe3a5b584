#pragma once
// Text from a user or a file, made safe to print: the one function every message and every printed
// path goes through, so that a file name such as $'p\e[2Jq\nr.html' can neither clear the screen nor
// start a line of its own.
#include <string>
#include <string_view>

namespace attnlab {

// Every control character (C0 but tab, and newline unless keep_newlines; DEL; C1, U+0080 to U+009F)
// shows as an escape ("\x1b", "\u009b"), and so does every byte that is not part of valid UTF-8
// ("\xff") and the bidirectional overrides and isolates (U+202A–E, U+2066–9), so such text can neither
// move the cursor, retitle the window, reorder what follows nor clear the screen. Everything else is
// unchanged.
std::string visible_text(std::string_view s, bool keep_newlines = false);

// A path as a message prints it: visible_text without newlines, so one path is always one piece of
// one line. Paths are shown as they are otherwise (no quotes), so "runs/ts/model.ckpt" reads as typed.
std::string shown_path(std::string_view path);

}  // namespace attnlab
