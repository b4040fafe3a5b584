#include "exercises/state.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>

#include <nlohmann/json.hpp>

#include "io/files.hpp"
#include "io/json_text.hpp"
#include "util/error.hpp"
#include "util/shown.hpp"

namespace attnlab::exercises {

namespace fs = std::filesystem;

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

ProgressStore::ProgressStore(fs::path file, std::string workspace) : file_(std::move(file)), workspace_(std::move(workspace)) {
  load();
}

void ProgressStore::load() {
  items_.clear();
  std::error_code ec;
  if (!fs::exists(file_, ec)) return;  // first run: nothing yet
  if (fs::is_directory(file_, ec)) {
    // Not a damaged progress file but something else in its place: never move a folder aside.
    throw InputError("the progress file " + file_.string() + " is a folder; move it away (attnlab keeps your progress in that file)");
  }
  try {
    const auto j = io::parse_json_bounded(io::read_text_file(file_.string(), 4 << 20));
    if (!j.is_object() || j.value("version", 0) != 1 || !j.contains("exercises") || !j["exercises"].is_object()) {
      throw std::runtime_error("not an attnlab progress file (version 1)");
    }
    for (const auto& [slug, e] : j["exercises"].items()) {
      ExerciseProgress p;
      p.status = e.value("status", "");
      if (p.status != "" && p.status != "failing" && p.status != "passed") {
        throw std::runtime_error("unknown status '" + p.status + "' for " + slug);
      }
      p.ever_passed = e.value("ever_passed", false);
      // Counts are whole numbers from 0 to 10^9: -5 or 1e300 is damage, not progress (1e300 would
      // overflow an int and print as -2147483648).
      auto count = [&](const char* key) {
        if (!e.contains(key)) return 0;
        const auto& v = e[key];
        const bool ok = v.is_number_unsigned() ? v.get<unsigned long long>() <= 1000000000ull
                                               : v.is_number_integer() && v.get<long long>() >= 0 && v.get<long long>() <= 1000000000;
        if (!ok)
          throw std::runtime_error(std::string(key) + " of " + slug + " is " + v.dump() + ", expected a whole number from 0 to 10^9");
        return v.get<int>();
      };
      p.checks = count("checks");
      p.hints_shown = count("hints_shown");
      p.last_check = e.value("last_check", "");
      items_[slug] = p;
    }
  } catch (const std::exception& err) {
    items_.clear();
    fs::path aside = file_;
    aside += ".corrupt";
    for (int n = 2; fs::exists(aside, ec) && n < 1000; ++n) {  // never overwrite an earlier backup
      aside = file_;
      aside += ".corrupt." + std::to_string(n);
    }
    fs::rename(file_, aside, ec);
    std::fprintf(stderr,
                 "attnlab: warning: the progress file %s is corrupt (%s); starting a fresh one%s.\n",
                 shown_path(file_.string()).c_str(), visible_text(io::json_error_text(err)).c_str(),
                 ec ? "" : (" (the old file is kept as " + shown_path(aside.string()) + ")").c_str());
  }
}

ExerciseProgress ProgressStore::get(const std::string& slug) const {
  const auto it = items_.find(slug);
  return it == items_.end() ? ExerciseProgress{} : it->second;
}

ExerciseProgress ProgressStore::update(const std::string& slug, const std::function<void(ExerciseProgress&)>& change) {
  std::error_code ec;
  fs::create_directories(file_.parent_path(), ec);
  if (ec) throw RuntimeError("cannot create " + file_.parent_path().string() + " (" + ec.message() + ")");
  fs::path lock_path = file_;
  lock_path += ".lock";
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw RuntimeError("cannot open " + lock_path.string() + " (" + std::strerror(errno) + ")");
  while (::flock(fd, LOCK_EX) != 0 && errno == EINTR) {
  }
  try {
    load();  // what another command saved since this one read the file
    change(items_[slug]);
    save();
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);  // releases the lock
  return items_[slug];
}

void ProgressStore::save() const {
  nlohmann::json j;
  j["version"] = 1;
  if (!workspace_.empty()) j["workspace"] = workspace_;
  j["exercises"] = nlohmann::json::object();
  for (const auto& [slug, p] : items_) {
    j["exercises"][slug] = {{"status", p.status},
                            {"ever_passed", p.ever_passed},
                            {"checks", p.checks},
                            {"hints_shown", p.hints_shown},
                            {"last_check", p.last_check}};
  }
  std::error_code ec;
  fs::create_directories(file_.parent_path(), ec);
  if (ec) throw RuntimeError("cannot create " + file_.parent_path().string() + " (" + ec.message() + ")");
  io::write_file_atomic(file_.string(), j.dump(2) + "\n");
}

}  // namespace attnlab::exercises
