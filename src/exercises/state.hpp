#pragma once
// The learner's progress in one workspace: per exercise, whether the last check passed, how many
// checks ran, and how many hints were shown. Stored as JSON, written atomically
// (attnlab::io::write_file_atomic) under a lock; a corrupt or unreadable file is reported on stderr, kept
// aside as FILE.corrupt (or FILE.corrupt.2, ... : an earlier backup is never overwritten), and rebuilt
// empty.
#include <filesystem>
#include <functional>
#include <map>
#include <string>

namespace attnlab::exercises {

struct ExerciseProgress {
  std::string status;  // "" (never checked), "failing" or "passed"
  bool ever_passed = false;
  int checks = 0;
  int hints_shown = 0;
  std::string last_check;  // ISO-8601 UTC time of the last check
};

class ProgressStore {
 public:
  // `workspace`, when given, is recorded in the file (one progress file per workspace).
  explicit ProgressStore(std::filesystem::path file, std::string workspace = "");

  ExerciseProgress get(const std::string& slug) const;
  // Changes one exercise's record and saves, under an exclusive lock on FILE.lock that covers reading
  // the file again, the change and the write: two commands updating at once (watch and a manual
  // check) each see the other's update instead of overwriting it. Returns the record as saved.
  ExerciseProgress update(const std::string& slug, const std::function<void(ExerciseProgress&)>& change);
  const std::filesystem::path& file() const { return file_; }

 private:
  void load();
  void save() const;

  std::filesystem::path file_;
  std::string workspace_;
  std::map<std::string, ExerciseProgress> items_;
};

// The current time as "2026-11-21T15:42:52Z".
std::string utc_now();

}  // namespace attnlab::exercises
