#pragma once
// The learner's progress: per exercise, whether the last check passed, how many checks ran, and how
// many hints were shown. Stored as JSON, written atomically (attnlab::write_file_atomic); a corrupt
// or unreadable file is reported on stderr, kept aside as progress.json.corrupt, and rebuilt empty.
#include <filesystem>
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
  explicit ProgressStore(std::filesystem::path file);

  ExerciseProgress& at(const std::string& slug) { return items_[slug]; }
  ExerciseProgress get(const std::string& slug) const;
  void save() const;
  const std::filesystem::path& file() const { return file_; }

 private:
  std::filesystem::path file_;
  std::map<std::string, ExerciseProgress> items_;
};

// The current time as "2026-11-21T15:42:52Z".
std::string utc_now();

}  // namespace attnlab::exercises
