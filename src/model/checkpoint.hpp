#pragma once
// The checkpoint file format (version 1), documented in docs/checkpoint.md.
//
//   bytes 0–7    magic "ATNLCKPT"
//   bytes 8–11   format version, uint32 little-endian (1)
//   bytes 12–15  reserved, 0
//   bytes 16–23  header length H, uint64
//   24 … 24+H    header: UTF-8 JSON {"config", "vocab", "tensors": [{"group", "name", "shape",
//                "offset", "count"}], "train_state", "meta", and "tokenizer" when the model reads
//                sub-word tokens (a byte-level BPE's JSON form, bpe.hpp; "vocab" then holds its
//                token texts)}
//   then         tensor data: float32 little-endian, at the offsets (bytes after the header)
//   last 8 bytes FNV-1a 64-bit hash of every byte before it
//
// Groups: "params" (always; in the model's layout order), "adam_m" and "adam_v" (training state,
// so that --resume continues bit-exactly). Files are written atomically (temp, fsync, rename).
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/config.hpp"

namespace attnlab::model {

inline constexpr std::uint32_t kCheckpointVersion = 1;

struct Checkpoint {
  ModelConfig config;
  std::vector<std::string> vocab;  // token id → word
  nlohmann::json tokenizer;        // null: word-level (tokenizer.hpp); else the BPE's JSON form
  std::vector<float> params;       // make_layout(config) order
  std::vector<float> adam_m, adam_v;  // empty for an inference-only checkpoint
  nlohmann::json train_state;      // step, RNG state, data cursor… (null when absent)
  nlohmann::json meta;             // free-form: training config, metrics, provenance
};

void save_checkpoint(const std::string& path, const Checkpoint& ck);

// Throws InputError with a clear message for a missing, truncated, corrupted (checksum), wrong-version
// or inconsistent (config vs tensors, vocabulary size) file.
Checkpoint load_checkpoint(const std::string& path);

// The same two in memory: the bytes save_checkpoint writes, and the reader of load_checkpoint on
// the bytes of a file. `source` (the path, or any name) starts every error message. The fuzz target
// tests/fuzz/fuzz_checkpoint.cpp feeds parse_checkpoint directly.
std::string checkpoint_to_bytes(const Checkpoint& ck);
Checkpoint parse_checkpoint(std::string_view bytes, const std::string& source);

}  // namespace attnlab::model
