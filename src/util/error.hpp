#pragma once
// Typed errors at the library boundary. They are thrown by the library and caught once, in main(),
// which prints the message and exits with the error's code. Messages are written for the user: they
// name the field, say what was expected and what was found, and (where useful) what to do next.
#include <stdexcept>
#include <string>

namespace attnlab {

// Base of every error attnlab reports to the user.
class Error : public std::runtime_error {
 public:
  Error(std::string message, int exit_code) : std::runtime_error(std::move(message)), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

// Bad input from the user (a file, a flag value, a JSON field): exit code 2.
class InputError : public Error {
 public:
  explicit InputError(std::string message) : Error(std::move(message), 2) {}
};

// A shape mismatch between arguments of a library function. Raised when the library itself is called
// with inconsistent shapes; input readers validate first, so users see an InputError instead.
class ShapeError : public Error {
 public:
  explicit ShapeError(std::string message) : Error(std::move(message), 2) {}
};

// A computation produced a number that float32 cannot hold (e.g. scores that overflow to inf because
// the inputs are huge). It is the input's magnitude that is at fault, so the exit code is 2.
class NumericError : public Error {
 public:
  explicit NumericError(std::string message) : Error(std::move(message), 2) {}
};

// Something failed at run time that is not the user's input (I/O, device): exit code 1.
class RuntimeError : public Error {
 public:
  explicit RuntimeError(std::string message) : Error(std::move(message), 1) {}
};

// The user interrupted long work (Ctrl-C, SIGTERM) and it stopped cleanly after saving its state.
// Exit code 130 (128 + SIGINT), as shells report an interrupted command; not printed as an error.
class Interrupted : public Error {
 public:
  explicit Interrupted(std::string message) : Error(std::move(message), 130) {}
};

}  // namespace attnlab
