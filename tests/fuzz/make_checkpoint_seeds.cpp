// Writes the seed corpus of fuzz_checkpoint (tests/fuzz/checkpoint/): tiny but real checkpoints of
// each kind the format holds, and a few broken ones the reader must reject. Deterministic, so running
// it again gives the same bytes:
//   build/tests/fuzz/fuzz_make_checkpoint_seeds tests/fuzz/checkpoint
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "backend/cpu/cpu_backend.hpp"
#include "model/checkpoint.hpp"
#include "model/transformer.hpp"
#include "util/rng.hpp"

using namespace attnlab;
using namespace attnlab::model;

namespace {

std::filesystem::path out_dir;

void write(const std::string& name, const std::string& bytes) {
  std::ofstream(out_dir / name, std::ios::binary) << bytes;
  std::printf("%s: %zu bytes\n", (out_dir / name).string().c_str(), bytes.size());
}

// Recomputes the trailing FNV-1a checksum after an edit, so the reader gets past it.
std::string with_checksum(std::string bytes) {
  const std::uint64_t sum = fnv1a(std::string_view(bytes).substr(0, bytes.size() - 8));
  std::memcpy(bytes.data() + bytes.size() - 8, &sum, 8);
  return bytes;
}

Checkpoint tiny(bool decoder_only, bool tie, bool adam) {
  ModelConfig c;
  c.decoder_only = decoder_only;
  c.tie_embeddings = tie;
  c.vocab_size = 7;
  c.d_model = 4;
  c.heads = 2;
  c.d_ff = 6;
  c.encoder_layers = decoder_only ? 0 : 1;
  c.decoder_layers = 1;
  c.max_len = 6;
  Transformer<float> net(c, attnlab::backend::cpu_backend<float>());
  net.init_params(decoder_only ? 2 : 1);
  Checkpoint ck;
  ck.config = c;
  ck.vocab = {"<pad>", "<unk>", "<bos>", "<eos>", "the", "chat", "é"};
  ck.params = net.params.download();
  if (adam) {
    ck.adam_m.assign(ck.params.size(), 0.01f);
    ck.adam_v.assign(ck.params.size(), 1e-4f);
    ck.train_state = {{"step", 3}, {"rng", 12345}};
  }
  ck.meta = {{"note", "fuzz seed"}};
  return ck;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT_DIR\n", argv[0]);
    return 2;
  }
  out_dir = argv[1];
  std::filesystem::create_directories(out_dir);
  const std::string encdec = checkpoint_to_bytes(tiny(false, true, false));
  write("tiny_encoder_decoder.ckpt", encdec);
  write("tiny_untied_adam.ckpt", checkpoint_to_bytes(tiny(false, false, true)));
  write("tiny_decoder_only.ckpt", checkpoint_to_bytes(tiny(true, true, false)));
  write("truncated.ckpt", encdec.substr(0, 300));
  std::string flipped = encdec;
  flipped[flipped.size() - 20] ^= 0x40;
  write("bad_checksum.ckpt", flipped);
  std::string v2 = encdec;  // version 2 announces bf16 tensors; this one has none
  v2[8] = 2;
  write("version_2.ckpt", with_checksum(v2));
  std::string v3 = encdec;
  v3[8] = 3;
  write("version_3.ckpt", with_checksum(v3));
  Checkpoint half = tiny(false, true, false);
  half.params_storage = Storage::bf16;
  write("tiny_bf16.ckpt", checkpoint_to_bytes(half));
  std::string mismatch = encdec;  // the same length, so the header length stays right
  const auto at = mismatch.find("\"d_ff\":6");
  if (at == std::string::npos) return 1;
  mismatch[at + 7] = '8';
  write("config_mismatch.ckpt", with_checksum(mismatch));
  return 0;
}
