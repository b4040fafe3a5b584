#pragma once
// The checkpoint file format (versions 1 and 2), documented in docs/checkpoint.md.
//
//   bytes 0–7    magic "ATNLCKPT"
//   bytes 8–11   format version, uint32 little-endian (1: every tensor float32; 2: some bf16)
//   bytes 12–15  reserved, 0
//   bytes 16–23  header length H, uint64
//   24 … 24+H    header: UTF-8 JSON {"config", "vocab", "tensors": [{"group", "name", "shape",
//                "offset", "count", "dtype"}], "train_state", "meta", and "tokenizer" when the model reads
//                sub-word tokens (a byte-level BPE's JSON form, bpe.hpp; "vocab" then holds its
//                token texts)}
//   then         tensor data: float32 (or, where "dtype" is "bf16", bfloat16) little-endian, at the
//                offsets (bytes after the header)
//   last 8 bytes FNV-1a 64-bit hash of every byte before it
//
// Groups: "params" (always; in the model's layout order), "adam_m" and "adam_v" (training state,
// so that --resume continues bit-exactly). Files are written atomically (temp, fsync, rename).
//
// Why bf16 storage: a shipped model's parameters may be stored in bfloat16 (the top 16 bits of each
// float32, rounded to nearest, ties to even) to halve the file; loading widens them back to float32
// exactly, and the model then computes in float32 as always. Only "params" may be bf16: the Adam
// moments of train-state.ckpt stay float32 so that --resume is bit-exact. A file with no bf16 tensor
// is written as version 1, byte for byte as before; one with a bf16 tensor as version 2, so that an
// older attnlab refuses it by its version instead of reading 16-bit words as floats.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/config.hpp"

namespace attnlab::model {

inline constexpr std::uint32_t kCheckpointVersion = 1;      // every tensor float32
inline constexpr std::uint32_t kCheckpointVersionBf16 = 2;  // some "params" tensors bfloat16

// How the parameters lie in the file. Loading always widens to float32 (`params` is float32 either
// way); `params_storage` then says what the file held, so that a command can say so.
enum class Storage { fp32, bf16 };

struct Checkpoint {
  ModelConfig config;
  std::vector<std::string> vocab;  // token id → word
  nlohmann::json tokenizer;        // null: word-level (tokenizer.hpp); else the BPE's JSON form
  std::vector<float> params;       // make_layout(config) order
  Storage params_storage = Storage::fp32;  // save: how to store params; load: how they were stored
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
