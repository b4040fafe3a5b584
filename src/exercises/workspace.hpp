#pragma once
// Where the learner's files and the progress state live.
//
// The repository's stubs stay pristine: on first use an exercise's stub is copied into the workspace,
// $XDG_DATA_HOME/attnlab/exercises/SLUG/exercise.cpp (default ~/.local/share/attnlab/exercises/), and
// the learner edits that copy. `--workspace DIR` picks another folder, which must already exist.
// Check builds go to a folder of their own per run, WORKSPACE/.build/SLUG/run-XXXXXX/, removed after
// the run. Progress is kept per workspace (state_file_for): the default workspace's in
// $XDG_STATE_HOME/attnlab/progress.json (default ~/.local/state/attnlab/progress.json).
#include <filesystem>
#include <string>

#include "exercises/catalogue.hpp"

namespace attnlab::exercises {

struct Workspace {
  fs::path root;

  fs::path folder(const ExerciseInfo& ex) const { return root / ex.slug; }
  fs::path learner_file(const ExerciseInfo& ex) const { return folder(ex) / "exercise.cpp"; }
  fs::path build_dir(const ExerciseInfo& ex) const { return root / ".build" / ex.slug; }
};

// `option` empty: the XDG default, created when missing. Otherwise the folder must exist
// (InputError otherwise: a mistyped path should not silently start a fresh workspace).
Workspace open_workspace(const std::string& option);

// Copies the stub into the workspace unless the learner's file exists. Returns true when it copied.
bool ensure_learner_file(const Workspace& ws, const ExerciseInfo& ex);

// True when the learner's file is missing or still identical to the stub.
bool untouched(const Workspace& ws, const ExerciseInfo& ex);

// Saves the learner's file as exercise.cpp.bak-YYYYMMDD-HHMMSS beside it and restores the stub.
// Returns the backup's path (empty when there was no learner file to save).
fs::path reset_learner_file(const Workspace& ws, const ExerciseInfo& ex);

// $XDG_STATE_HOME/attnlab/progress.json (default ~/.local/state/attnlab/progress.json).
fs::path default_state_file();

// The progress file of a workspace: default_state_file() for the default workspace, else
// $XDG_STATE_HOME/attnlab/workspaces/HASH.json (HASH: 16 hex digits of FNV-1a of the folder's
// canonical path), so a check in one workspace never changes the progress of another.
fs::path state_file_for(const Workspace& ws);

// "~/..." when under $HOME, for shorter messages; shown through attnlab::shown_path (safe to print).
std::string pretty_path(const fs::path& p);

}  // namespace attnlab::exercises
