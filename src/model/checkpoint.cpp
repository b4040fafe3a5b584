#include "model/checkpoint.hpp"

#include <cmath>
#include <cstring>
#include <map>

#include "backend/bf16.hpp"
#include "io/files.hpp"
#include "io/json_text.hpp"
#include "util/error.hpp"
#include "util/rng.hpp"

namespace attnlab::model {

namespace {

constexpr char kMagic[8] = {'A', 'T', 'N', 'L', 'C', 'K', 'P', 'T'};
constexpr std::size_t kMaxCheckpointBytes = std::size_t(4) << 30;

template <typename U>
void put(std::string& out, U v) {
  char buf[sizeof(U)];
  std::memcpy(buf, &v, sizeof(U));  // x86-64 and AArch64 are little-endian, as the format says
  out.append(buf, sizeof(U));
}

template <typename U>
U get(std::string_view in, std::size_t at) {
  U v;
  std::memcpy(&v, in.data() + at, sizeof(U));
  return v;
}

}  // namespace

void save_checkpoint(const std::string& path, const Checkpoint& ck) { io::write_file_atomic(path, checkpoint_to_bytes(ck)); }

Checkpoint load_checkpoint(const std::string& path) { return parse_checkpoint(io::read_text_file(path, kMaxCheckpointBytes), path); }

std::string checkpoint_to_bytes(const Checkpoint& ck) {
  const ParamLayout layout = make_layout(ck.config);
  if (ck.params.size() != layout.total) throw RuntimeError("save_checkpoint: parameter count does not match the config");
  const bool bf16 = ck.params_storage == Storage::bf16;
  // The moments must come back bit for bit for --resume; a bf16 file is a model to ship, not a run.
  if (bf16 && (!ck.adam_m.empty() || !ck.adam_v.empty())) {
    throw RuntimeError("save_checkpoint: bf16 storage is for the parameters of a model to ship, not for a training state");
  }
  nlohmann::json header;
  header["config"] = model_config_to_json(ck.config);
  header["vocab"] = ck.vocab;
  if (!ck.tokenizer.is_null()) header["tokenizer"] = ck.tokenizer;
  header["train_state"] = ck.train_state;
  header["meta"] = ck.meta;
  nlohmann::json tensors = nlohmann::json::array();
  std::size_t offset = 0;
  struct Group {
    const std::vector<float>* data;
    std::string name;
    std::size_t bytes_per_value;
  };
  std::vector<Group> groups{{&ck.params, "params", bf16 ? 2u : 4u}};
  if (!ck.adam_m.empty()) groups.push_back({&ck.adam_m, "adam_m", 4});
  if (!ck.adam_v.empty()) groups.push_back({&ck.adam_v, "adam_v", 4});
  for (const Group& g : groups) {
    if (g.data->size() != layout.total) throw RuntimeError("save_checkpoint: " + g.name + " has the wrong size");
    for (const TensorInfo& t : layout.tensors) {
      nlohmann::json entry{{"group", g.name}, {"name", t.name}, {"shape", t.shape}, {"offset", offset + t.offset * g.bytes_per_value},
                           {"count", t.size()}};
      // Version 1's entries have no "dtype" (float32); writing it only for bf16 keeps a float32 file
      // byte-identical to the ones written before bf16 storage existed.
      if (g.bytes_per_value == 2) entry["dtype"] = "bf16";
      tensors.push_back(std::move(entry));
    }
    offset += layout.total * g.bytes_per_value;
  }
  header["tensors"] = tensors;
  const std::string hj = header.dump();
  std::string out;
  out.reserve(24 + hj.size() + offset + 8);
  out.append(kMagic, 8);
  put<std::uint32_t>(out, bf16 ? kCheckpointVersionBf16 : kCheckpointVersion);
  put<std::uint32_t>(out, 0);
  put<std::uint64_t>(out, hj.size());
  out += hj;
  for (const Group& g : groups) {
    if (g.bytes_per_value == 4) {
      out.append(reinterpret_cast<const char*>(g.data->data()), g.data->size() * 4);
    } else {
      for (float v : *g.data) put<std::uint16_t>(out, backend::to_bf16(v).bits);
    }
  }
  put<std::uint64_t>(out, fnv1a(out));
  return out;
}

namespace {

// The errors of one checkpoint file, each prefixed with its name: "model.ckpt: corrupt: ...".
struct Complaint {
  const std::string& source;
  InputError operator()(const std::string& why) const { return InputError(source + ": " + why); }
};

// The file's frame, once its magic, version, checksum and header length are checked: the header's JSON
// text and the tensor data between it and the trailing checksum (the format: checkpoint.hpp).
struct Frame {
  std::uint32_t version = 0;
  std::string_view header, data;
};

// Phase 1: checks the frame (magic, format version, FNV-1a checksum, header length) before anything in
// it is parsed, so that a foreign, truncated or damaged file is named as one.
Frame read_frame(std::string_view in, const Complaint& bad) {
  if (in.size() < 8 || std::memcmp(in.data(), kMagic, 8) != 0) {
    if (in.size() < 8 && std::memcmp(in.data(), kMagic, in.size()) == 0) {
      throw bad("truncated: " + std::to_string(in.size()) + " bytes is too short for a checkpoint");
    }
    throw bad("not an attnlab checkpoint (the file does not start with \"ATNLCKPT\")");
  }
  if (in.size() < 32) throw bad("truncated: " + std::to_string(in.size()) + " bytes is too short for a checkpoint");
  const auto version = get<std::uint32_t>(in, 8);
  if (version != kCheckpointVersion && version != kCheckpointVersionBf16) {
    throw bad("checkpoint format version " + std::to_string(version) + " is not supported (this attnlab reads versions " +
              std::to_string(kCheckpointVersion) + " and " + std::to_string(kCheckpointVersionBf16) +
              "); retrain the model with this version");
  }
  const auto stored = get<std::uint64_t>(in, in.size() - 8);
  if (fnv1a(in.substr(0, in.size() - 8)) != stored) {
    throw bad("checksum mismatch: the file is corrupt or truncated (was it copied completely?)");
  }
  const auto hlen = get<std::uint64_t>(in, 16);
  if (hlen > in.size() - 32) throw bad("corrupt: the header length runs past the end of the file");
  const std::size_t data_start = 24 + hlen, data_end = in.size() - 8;
  return {version, in.substr(24, hlen), in.substr(data_start, data_end - data_start)};
}

// Phase 2: the header's JSON and what it holds besides the tensor table (the config, the vocabulary,
// the tokenizer, the training state, the meta), the vocabulary checked against the config. Returns the
// header for phase 3's tensor table.
nlohmann::json read_header(std::string_view text, Checkpoint& ck, const Complaint& bad) {
  nlohmann::json header;
  try {
    header = io::parse_json_bounded(text);
  } catch (const nlohmann::json::exception& e) {
    throw bad("corrupt header: " + io::json_error_text(e));
  }
  try {
    ck.config = model_config_from_json(header.at("config"), "config");
    ck.vocab = header.at("vocab").get<std::vector<std::string>>();
    ck.tokenizer = header.value("tokenizer", nlohmann::json());
    ck.train_state = header.value("train_state", nlohmann::json());
    ck.meta = header.value("meta", nlohmann::json());
  } catch (const InputError& e) {
    throw bad(std::string("bad config in header: ") + e.what());
  } catch (const nlohmann::json::exception& e) {
    throw bad("corrupt header: " + io::json_error_text(e));
  }
  if (static_cast<int>(ck.vocab.size()) != ck.config.vocab_size) {
    throw bad("the vocabulary has " + std::to_string(ck.vocab.size()) + " words but config.vocab_size is " +
              std::to_string(ck.config.vocab_size));
  }
  return header;
}

// Phase 3: the tensors. Each entry of the header's table must be the next tensor the config's layout
// defines, in its group (params, adam_m, adam_v), with its shape, lying inside `data`; each group
// present must be complete, params must be, and every parameter finite. A version 2 file may store
// "params" tensors in bf16 ("dtype"), which are widened to float32 here; version 1 has float32 only.
void read_tensors(const nlohmann::json& header, std::uint32_t version, std::string_view data, Checkpoint& ck, const Complaint& bad) {
  const ParamLayout layout = make_layout(ck.config);
  // Each group holds layout.total values of at least 2 bytes. Say no before allocating them when the
  // file cannot hold even one group: tensor entries may point at the same bytes, so without this a
  // forged config (many layers, a wide d_ff) made a file of a few KB ask for tens of GB.
  const std::size_t min_bytes = version == kCheckpointVersionBf16 ? 2 : 4;
  if (layout.total > data.size() / min_bytes) {
    throw bad("config does not match the tensors: the config defines " + std::to_string(layout.total) +
              " parameters (" + std::to_string(layout.total * min_bytes) + " bytes), but the file holds " +
              std::to_string(data.size()) + " bytes of tensor data");
  }
  std::map<std::string, std::vector<float>*> groups{{"params", &ck.params}, {"adam_m", &ck.adam_m}, {"adam_v", &ck.adam_v}};
  std::map<std::string, std::size_t> seen;
  try {
    for (const auto& t : header.at("tensors")) {
      const std::string group = t.at("group").get<std::string>();
      const std::string name = t.at("name").get<std::string>();
      auto git = groups.find(group);
      if (git == groups.end()) throw bad("unknown tensor group \"" + group + "\"");
      const std::size_t idx = seen[group]++;
      if (idx >= layout.tensors.size()) throw bad("config does not match the tensors: more " + group + " tensors than the config defines");
      const TensorInfo& want = layout.tensors[idx];
      const auto shape = t.at("shape").get<std::vector<int>>();
      if (name != want.name || shape != want.shape) {
        auto show = [](const std::vector<int>& s) {
          std::string r = "[";
          for (std::size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
          return r + "]";
        };
        throw bad("config does not match the tensors: tensor #" + std::to_string(idx) + " is \"" + name + "\" " + show(shape) +
                  ", the config expects \"" + want.name + "\" " + show(want.shape));
      }
      const std::string dtype = t.value("dtype", std::string("f32"));
      if (dtype != "f32" && dtype != "bf16") {
        throw bad("corrupt tensor table: \"" + name + "\" has dtype \"" + dtype + "\", expected \"f32\" or \"bf16\"");
      }
      const bool is_bf16 = dtype == "bf16";
      // One storage per file, so that writing a loaded file again gives it back (the checkpoint fuzz
      // target's invariant): version 1 is float32 throughout; version 2 is a model to ship, every
      // parameter in bf16 and no training state.
      if (is_bf16 && version != kCheckpointVersionBf16) {
        throw bad("corrupt tensor table: \"" + name + "\" is bf16 in a version " + std::to_string(version) +
                  " file (bf16 tensors need version " + std::to_string(kCheckpointVersionBf16) + ")");
      }
      if (version == kCheckpointVersionBf16 && group != "params") {
        throw bad("corrupt tensor table: \"" + name + "\" of " + group + " in a version " + std::to_string(version) +
                  " file (a bf16 model holds no training state)");
      }
      if (version == kCheckpointVersionBf16 && !is_bf16) {
        throw bad("corrupt tensor table: \"" + name + "\" is f32 in a version " + std::to_string(version) +
                  " file (whose parameters are all bf16)");
      }
      const std::size_t width = is_bf16 ? 2 : 4;
      const auto off = t.at("offset").get<std::uint64_t>(), count = t.at("count").get<std::uint64_t>();
      if (count != want.size() || off > data.size() || count * width > data.size() - off) {
        throw bad("corrupt tensor table: \"" + name + "\" lies outside the data");
      }
      std::vector<float>& dst = *git->second;
      if (dst.empty()) dst.assign(layout.total, 0.0f);
      if (is_bf16) {
        const char* src = data.data() + off;
        for (std::size_t i = 0; i < count; ++i) {
          std::uint16_t bits;
          std::memcpy(&bits, src + 2 * i, 2);
          dst[want.offset + i] = backend::to_float(backend::Bf16{bits});  // exact: bf16 is float32's top half
        }
      } else {
        std::memcpy(dst.data() + want.offset, data.data() + off, count * 4);
      }
    }
  } catch (const nlohmann::json::exception& e) {
    throw bad("corrupt tensor table: " + io::json_error_text(e));
  }
  for (const auto& [group, count] : seen) {
    if (count != layout.tensors.size()) {
      throw bad("config does not match the tensors: " + group + " holds " + std::to_string(count) + " tensors, the config defines " +
                std::to_string(layout.tensors.size()));
    }
  }
  if (!seen.count("params")) throw bad("no parameters in the checkpoint");
  ck.params_storage = version == kCheckpointVersionBf16 ? Storage::bf16 : Storage::fp32;  // one storage per file (above)
  for (float v : ck.params)
    if (!std::isfinite(v)) throw bad("corrupt: a parameter is inf or NaN");
}

}  // namespace

// The three phases in order: the frame, the header, the tensors; each names the file in its errors.
Checkpoint parse_checkpoint(std::string_view in, const std::string& source) {
  const Complaint bad{source};
  const Frame frame = read_frame(in, bad);
  Checkpoint ck;
  const nlohmann::json header = read_header(frame.header, ck, bad);
  read_tensors(header, frame.version, frame.data, ck, bad);
  return ck;
}

}  // namespace attnlab::model
