// --config NAME|FILE, the same way for every command that takes a run config (train, bench, params):
// an existing path is used as it is; a bare name (no '/', no ".json") is looked up as
// data/configs/NAME.json, so `attnlab train --config translate-small` and
// `attnlab params --config transformer-base` both work from any folder.
#pragma once

#include <string>

namespace attnlab::cli {

// The file to load for `--config value`. A path that does not exist is returned unchanged, so the
// loader reports it with its own message ("cannot open … check the path"); a bare name that is neither
// a file nor a config in data/configs throws InputError listing the known names.
std::string find_config(const std::string& value);

// "gpt2-small, translate-small, …": the names in data/configs, for messages and --help.
std::string config_names();

}  // namespace attnlab::cli
