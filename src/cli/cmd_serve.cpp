// attnlab serve [--model M]... [--port 8080] [--host 127.0.0.1] [--open] [--max-requests N]
// The attention explorer as a live page: a small HTTP server (Debian's cpp-httplib) on this machine
// that serves the explorer page and answers
//   GET /api/models                               the models it can use: the shipped ones and any --model
//   GET /api/attend?sentence=…[&model=NAME][&vectors=1]
//                                                 exactly the JSON of `attnlab attend --format json`
//                                                 (with vectors=1: of `… --vectors`)
//   GET /api/translate?sentence=…[&model=NAME][&attention=1][&vectors=1]
//                                                 exactly the JSON of `attnlab translate --format json`
//                                                 (with attention=1: of `… --format json --show-attention`,
//                                                 vectors=1 adds `--vectors`)
// and the same two as POST with a JSON body {"sentence": …, "model": …, "attention": …} for sentences
// too long for a URL. A request names a model only by the names /api/models lists: nothing from a
// request reaches the file system or a shell. Bad requests get 400 and {"error": "FIELD: …", "field"}.
#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include <cblas.h>
#include <netdb.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "backend/cpu/cpu_backend.hpp"
#include "backend/cpu/parallel.hpp"
#include "cli/commands.hpp"
#include "cli/model_documents.hpp"
#include "cli/pictures.hpp"
#include "cli/stop_signals.hpp"
#include "cli/validators.hpp"
#include "lessons/trained.hpp"
#include "model/transformer.hpp"
#include "render/html_page.hpp"
#include "tasks/task.hpp"
#include "util/error.hpp"
#include "util/paths.hpp"
#include "util/shown.hpp"

extern char** environ;

namespace attnlab::cli {

struct ServeOptions {
  std::vector<std::string> models;
  int port = 8080;
  std::string host = "127.0.0.1";
  bool open = false;
  int max_requests = 8;
  int workers = 0;  // forward passes at once; 0: one per core (at most --max-requests)
};

namespace {

constexpr std::size_t kMaxSentenceBytes = 10240;

// One model the server can use, loaded once at start.
struct ServedModel {
  std::string name;
  std::string task;  // "translation" (encoder–decoder) or "language model" (decoder-only)
  std::string description;
  std::unique_ptr<tasks::LoadedModel> m;
};

// A request the server refuses: HTTP status, the field at fault and the message.
struct Refusal {
  int status;
  std::string field;
  std::string message;
};

bool valid_utf8(const std::string& s) {
  std::size_t i = 0;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data());
  while (i < s.size()) {
    const unsigned char c = p[i];
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    std::uint32_t cp = len == 1 ? c : len == 2 ? c & 0x1F : len == 3 ? c & 0x0F : c & 0x07;
    for (std::size_t k = 1; k < len; ++k) {
      if ((p[i + k] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i + k] & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
        (cp >= 0xD800 && cp <= 0xDFFF))
      return false;
    i += len;
  }
  return true;
}

bool blank(const std::string& s) { return s.find_first_not_of(" \t\r\n") == std::string::npos; }

// A copy of a loaded model on another backend: the same weights, vocabulary and metadata, and its own
// activations, caches and scratch (a Transformer keeps its last pass inside itself, and a CPU backend
// its scratch buffers), so that two lanes can run forward passes at the same time.
std::unique_ptr<tasks::LoadedModel> copy_on(const tasks::LoadedModel& m, backend::Ops<float>& be) {
  auto c = std::make_unique<tasks::LoadedModel>();
  c->dir = m.dir;
  c->run = m.run;
  c->vocab = m.vocab;
  c->meta = m.meta;
  c->known_source_words = m.known_source_words;
  c->weights = m.weights;
  c->net = std::make_unique<model::Transformer<float>>(m.net->config(), be);
  c->net->params.upload(m.net->params.download());
  return c;
}

class LiveServer {
 public:
  explicit LiveServer(const ServeOptions& o) : max_requests_(o.max_requests) {}

  // A lane: one forward pass at a time, on its own copy of every model (lane 0: the models_ themselves)
  // and its own CPU backend. Requests take any free lane and wait for one when all are busy.
  struct Lane {
    std::unique_ptr<backend::Ops<float>> be;        // null for lane 0 (the process-wide CPU backend)
    std::vector<std::unique_ptr<tasks::LoadedModel>> copies;  // lanes 1…: one per models_ entry
    bool busy = false;
  };
  class LaneHold {
   public:
    LaneHold(LiveServer& s) : s_(s) {
      std::unique_lock<std::mutex> lk(s_.lanes_mu_);
      s_.lane_free_.wait(lk, [&] {
        for (std::size_t i = 0; i < s_.lanes_.size(); ++i)
          if (!s_.lanes_[i].busy) return (index_ = i), true;
        return false;
      });
      s_.lanes_[index_].busy = true;
    }
    ~LaneHold() {
      {
        std::lock_guard<std::mutex> lk(s_.lanes_mu_);
        s_.lanes_[index_].busy = false;
      }
      s_.lane_free_.notify_one();
    }
    LaneHold(const LaneHold&) = delete;
    LaneHold& operator=(const LaneHold&) = delete;
    // This lane's copy of the served model `s`.
    tasks::LoadedModel& model(const ServedModel& sm) {
      if (index_ == 0) return *sm.m;
      return *s_.lanes_[index_].copies[static_cast<std::size_t>(&sm - s_.models_.data())];
    }

   private:
    LiveServer& s_;
    std::size_t index_ = 0;
  };

  void run(const ServeOptions& o);

 private:
  void load_models(const std::vector<std::string>& given);
  const ServedModel* find(const std::string& name) const {
    for (const auto& s : models_)
      if (s.name == name) return &s;
    return nullptr;
  }
  std::string names() const {
    std::string out;
    for (const auto& s : models_) out += (out.empty() ? "" : ", ") + s.name;
    return out;
  }
  nlohmann::json models_json() const;
  // The parameters of an API request: the URL's query (GET) or a JSON object (POST).
  std::map<std::string, std::string> params(const httplib::Request& req, const std::vector<std::string>& allowed) const;
  const ServedModel& model_for(const std::map<std::string, std::string>& p, const std::string& default_name, bool translation) const;
  static std::string sentence_of(const std::map<std::string, std::string>& p);
  void answer(const httplib::Request& req, httplib::Response& res, bool translate);

  std::vector<ServedModel> models_;
  std::string default_attend_, default_translate_;
  // Forward passes run on lanes, one pass per lane at a time: a Transformer keeps the attention of its
  // last pass inside itself (model/transformer.hpp) and a CPU backend its scratch, so each lane has its
  // own copies. With more than one lane, OpenBLAS and attnlab's own loops are single-threaded (their
  // thread counts are process-wide): the parallelism is one request per core, which for these small
  // matrices (a few rows per product while decoding) is worth far more than two cores on one product.
  void make_lanes(int n);
  std::vector<Lane> lanes_;
  std::mutex lanes_mu_;
  std::condition_variable lane_free_;
  std::atomic<int> in_flight_{0};
  int max_requests_;
  std::string page_;
};

void LiveServer::load_models(const std::vector<std::string>& given) {
  namespace fs = std::filesystem;
  auto add = [&](std::unique_ptr<tasks::LoadedModel> m, const std::string& as_given) {
    const std::string name = model_name(m->dir);
    if (const ServedModel* s = find(name)) {
      std::error_code ec;
      if (fs::equivalent(s->m->dir, m->dir, ec)) return;  // the same model, given twice
      throw InputError(fmt::format("--model {}: another model is already served as \"{}\" ({}); give models different folder names",
                                   shown_path(as_given), name, shown_path(s->m->dir)));
    }
    ServedModel s;
    s.name = name;
    s.task = m->net->config().decoder_only ? "language model" : "translation";
    s.description = lessons::describe_model(*m);
    s.m = std::move(m);
    models_.push_back(std::move(s));
  };
  for (const auto& g : given) add(std::make_unique<tasks::LoadedModel>(tasks::load_model(g, backend::cpu_backend<float>())), g);
  // The shipped models (data/models/NAME), loaded by the same relative name `attend --model
  // data/models/NAME` would use, so that the JSON (its "model.dir") is the same as the command's.
  std::error_code ec;
  std::vector<std::string> shipped;
  std::string folder;
  try {
    folder = resolve_data_path("data/models");
  } catch (const Error&) {
    folder.clear();  // no data folder: only the --model ones
  }
  if (!folder.empty() && fs::is_directory(folder, ec))
    for (const auto& e : fs::directory_iterator(folder, ec))
      if (fs::exists(e.path() / "model.ckpt", ec)) shipped.push_back(e.path().filename().string());
  std::sort(shipped.begin(), shipped.end());
  for (const auto& name : shipped) {
    try {
      add(std::make_unique<tasks::LoadedModel>(tasks::load_model("data/models/" + name, backend::cpu_backend<float>())), "data/models/" + name);
    } catch (const InputError& e) {
      if (std::string(e.what()).find("already served") != std::string::npos) continue;  // a --model of that name wins
      std::cerr << "attnlab: warning: " << visible_text(fmt::format("data/models/{} is not served: {}", name, e.what())) << '\n';
    } catch (const Error& e) {
      std::cerr << "attnlab: warning: " << visible_text(fmt::format("data/models/{} is not served: {}", name, e.what())) << '\n';
    }
  }
  if (models_.empty())
    throw InputError("--model: no model to serve; give --model DIR (a trained model's folder) or install attnlab's data/models");
  // The commands' defaults, when they are here; else the first model of the right kind.
  auto pick = [&](const std::string& rel, bool translation) {
    const std::string want = model_name(rel);
    if (const ServedModel* s = find(want); s && (s->task == "translation" || !translation)) return want;
    for (const auto& s : models_)
      if (!translation || s.task == "translation") return s.name;
    return std::string();
  };
  default_translate_ = pick(tasks::kDefaultTranslateModel, true);
  default_attend_ = pick(tasks::kDefaultTranslateModel, false);  // attend's default model is translate's
}

nlohmann::json LiveServer::models_json() const {
  nlohmann::json a = nlohmann::json::array();
  for (const auto& s : models_) {
    const model::ModelConfig& c = s.m->net->config();
    a.push_back({{"name", s.name},
                 {"task", s.task},
                 {"description", s.description},
                 {"layers", c.decoder_only ? c.decoder_layers : c.encoder_layers},
                 {"heads", c.heads},
                 {"max_tokens", c.decoder_only ? c.max_len - 1 : c.max_len}});
  }
  return {{"models", a},
          {"defaults", {{"attend", default_attend_.empty() ? nlohmann::json(nullptr) : nlohmann::json(default_attend_)},
                        {"translate", default_translate_.empty() ? nlohmann::json(nullptr) : nlohmann::json(default_translate_)}}},
          {"max_sentence_bytes", kMaxSentenceBytes}};
}

std::map<std::string, std::string> LiveServer::params(const httplib::Request& req, const std::vector<std::string>& allowed) const {
  std::map<std::string, std::string> out;
  auto take = [&](const std::string& key, const std::string& value) {
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      throw Refusal{400, key, fmt::format("{}: not a parameter of {} (it takes {})", key, req.path, list)};
    }
    if (out.count(key)) throw Refusal{400, key, key + ": given twice; give it once"};
    out[key] = value;
  };
  if (req.method == "POST") {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(req.body);
    } catch (const nlohmann::json::exception&) {
      throw Refusal{400, "body", "body: not JSON; send an object such as {\"sentence\": \"The boy trains the puppy.\"}"};
    }
    if (!j.is_object()) throw Refusal{400, "body", "body: expected a JSON object such as {\"sentence\": \"The boy trains the puppy.\"}"};
    for (const auto& [k, v] : j.items()) {
      if (v.is_string()) take(k, v.get<std::string>());
      else if (v.is_boolean()) take(k, v.get<bool>() ? "1" : "0");
      else throw Refusal{400, k, k + ": expected a string"};
    }
  } else {
    for (const auto& [k, v] : req.params) take(k, v);
  }
  return out;
}

std::string LiveServer::sentence_of(const std::map<std::string, std::string>& p) {
  const auto it = p.find("sentence");
  if (it == p.end()) throw Refusal{400, "sentence", "sentence: missing; give ?sentence=The+boy+trains+the+puppy."};
  const std::string& s = it->second;
  if (s.size() > kMaxSentenceBytes)
    throw Refusal{400, "sentence", fmt::format("sentence: {} bytes, more than the limit of {}", s.size(), kMaxSentenceBytes)};
  if (!valid_utf8(s)) throw Refusal{400, "sentence", "sentence: not valid UTF-8; send the text as UTF-8 (percent-encoded in a URL)"};
  if (blank(s)) throw Refusal{400, "sentence", "sentence: empty; give at least one word"};
  return s;
}

const ServedModel& LiveServer::model_for(const std::map<std::string, std::string>& p, const std::string& default_name,
                                     bool translation) const {
  const auto it = p.find("model");
  std::string name = it == p.end() ? default_name : it->second;
  if (it == p.end() && name.empty())
    throw Refusal{400, "model", fmt::format("model: this server has no default model for this; give one of {}", names())};
  const ServedModel* s = find(name);
  if (!s) {
    const std::string shown = name.size() > 80 ? name.substr(0, 77) + "..." : name;
    throw Refusal{400, "model", fmt::format("model: \"{}\" is not a model of this server; give one of {} (GET /api/models)",
                                            visible_text(shown), names())};
  }
  if (translation && s->task != "translation")
    throw Refusal{400, "model", fmt::format("model: {} is a language model; /api/translate needs a translation model (e.g. {})", name,
                                            default_translate_.empty() ? std::string("translate-wide") : default_translate_)};
  return *s;
}

void LiveServer::answer(const httplib::Request& req, httplib::Response& res, bool translate) {
  // At most max_requests_ answered at once; the rest are told to come back (503), never queued
  // without bound behind a long line of forward passes.
  struct Slot {
    std::atomic<int>& n;
    ~Slot() { --n; }
  } slot{in_flight_};
  if (++in_flight_ > max_requests_) {
    res.status = 503;
    res.set_header("Retry-After", "1");
    res.set_content(nlohmann::json({{"error", fmt::format("busy: {} requests are being answered, the most this server takes at once "
                                                          "(--max-requests); try again", max_requests_)}})
                        .dump(),
                    "application/json");
    return;
  }
  try {
    const auto p = params(req, translate ? std::vector<std::string>{"sentence", "model", "attention", "vectors"}
                                         : std::vector<std::string>{"sentence", "model", "vectors"});
    const std::string sentence = sentence_of(p);
    const ServedModel& s = model_for(p, translate ? default_translate_ : default_attend_, translate);
    auto flag = [&](const std::string& name) {
      const auto a = p.find(name);
      if (a == p.end()) return false;
      if (a->second != "0" && a->second != "1") throw Refusal{400, name, name + ": expected 0 or 1"};
      return a->second == "1";
    };
    const bool attention = flag("attention");
    const bool vectors = flag("vectors");  // the neuron view's q and k: `--vectors`
    if (translate && vectors && !attention)
      throw Refusal{400, "vectors", "vectors: the vectors go with the attention sets; give attention=1 too"};
    std::string body;
    std::vector<std::string> warnings;  // what the command prints on stderr; not part of its JSON
    try {
      LaneHold lane(*this);
      tasks::LoadedModel& lm = lane.model(s);
      if (translate) {
        TranslateRequest r;
        r.text = sentence;
        r.what = "sentence";
        r.record_attention = true;  // as --format json does
        r.cross_attention_json = true;
        r.attention_sets = attention;
        r.vectors = vectors;
        body = json_text(translate_document(lm, r, &warnings).doc);
      } else {
        body = json_text(attend_document(lm, compute_attend(lm, sentence, "sentence", -1, -1, &warnings, vectors), true));
      }
    } catch (const InputError& e) {
      throw Refusal{400, "sentence", e.what()};  // the sentence's own errors: too long, no known word
    }
    res.status = 200;
    res.set_content(body + "\n", "application/json");
  } catch (const Refusal& r) {
    res.status = r.status;
    res.set_content(nlohmann::json({{"error", r.message}, {"field", r.field}}).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                    "application/json");
  }
}

void LiveServer::make_lanes(int n) {
  lanes_.resize(static_cast<std::size_t>(n));
  for (std::size_t i = 1; i < lanes_.size(); ++i) {
    lanes_[i].be = backend::make_cpu_backend<float>(backend::CpuAttention::Lse);
    for (const auto& sm : models_) lanes_[i].copies.push_back(copy_on(*sm.m, *lanes_[i].be));
  }
}

void open_in_browser(const std::string& url) {
  pid_t pid = 0;
  std::vector<char*> argv = {const_cast<char*>("xdg-open"), const_cast<char*>(url.c_str()), nullptr};
  if (posix_spawnp(&pid, "xdg-open", nullptr, nullptr, argv.data(), environ) != 0) {
    std::cerr << "attnlab: note: --open: could not start xdg-open; open " << visible_text(url) << " in a browser yourself\n";
    return;
  }
  // Reaped when it ends; a failure (no browser here) is said, with the URL to open by hand.
  std::thread([pid, shown = visible_text(url)] {
    int status = 0;
    if (waitpid(pid, &status, 0) == pid && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
      std::cerr << "attnlab: note: --open: xdg-open could not open the page; open " + shown + " in a browser yourself\n";
  }).detach();
}

void LiveServer::run(const ServeOptions& o) {
  // Ctrl-C, SIGTERM or SIGHUP from here on: stop accepting, let the requests in hand finish, free the
  // port, exit 0 (also while the models load).
  StopOnSignals stop;
  std::signal(SIGPIPE, SIG_IGN);  // a client that went away is that request's end, not the server's

  // The host is an IP address (or localhost): never a name to look up in the DNS.
  addrinfo hints{};
  hints.ai_flags = AI_PASSIVE | (o.host == "localhost" ? 0 : AI_NUMERICHOST);
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (o.host.empty() || getaddrinfo(o.host.c_str(), nullptr, &hints, &found) != 0)
    throw InputError(fmt::format("--host: expected an IP address such as 127.0.0.1 (this machine only) or 0.0.0.0 (every "
                                 "network), got \"{}\"", visible_text(o.host)));
  freeaddrinfo(found);
  const bool loopback = o.host == "127.0.0.1" || o.host == "localhost" || o.host == "::1";
  if (!loopback)
    std::cerr << "attnlab: warning: --host " << visible_text(o.host)
              << ": anyone who can reach this machine on that address can use this server (it has no login); "
                 "the default, 127.0.0.1, serves only this machine\n";

  render::PageInfo info;
  info.title = "attnlab serve: the attention explorer";
  info.command = command_line();
  info.live = true;
  page_ = render::explorer_page(nlohmann::json::object(), info);

  httplib::Server svr;
  const int pool = max_requests_ + 4;  // room to answer the page, /api/models and "busy" while N compute
  svr.new_task_queue = [pool] { return new httplib::ThreadPool(static_cast<std::size_t>(pool)); };
  svr.set_keep_alive_timeout(1);  // an idle connection holds a worker (and a stop) at most this long
  svr.set_read_timeout(10);
  svr.set_write_timeout(10);
  svr.set_payload_max_length(64 * 1024);
  svr.Get("/", [this](const httplib::Request&, httplib::Response& res) { res.set_content(page_, "text/html; charset=utf-8"); });
  svr.Get("/favicon.ico", [](const httplib::Request&, httplib::Response& res) { res.status = 204; });  // none, and no 404 for it
  svr.Get("/api/models", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(models_json().dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n", "application/json");
  });
  svr.Get("/api/attend", [this](const httplib::Request& q, httplib::Response& r) { answer(q, r, false); });
  svr.Post("/api/attend", [this](const httplib::Request& q, httplib::Response& r) { answer(q, r, false); });
  svr.Get("/api/translate", [this](const httplib::Request& q, httplib::Response& r) { answer(q, r, true); });
  svr.Post("/api/translate", [this](const httplib::Request& q, httplib::Response& r) { answer(q, r, true); });
  // Errors that httplib answers itself (no such path, a URL too long) get a JSON body too.
  svr.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (res.status == 414) {
      // The whole URL is over httplib's 8192 bytes: a sentence longer than a URL can carry.
      res.status = 400;
      res.set_content(nlohmann::json({{"error", fmt::format("sentence: the URL is longer than 8192 bytes; a sentence may have up to {} "
                                                            "bytes, sent as a JSON body with POST",
                                                            kMaxSentenceBytes)},
                                      {"field", "sentence"}})
                          .dump(),
                      "application/json");
      return;
    }
    if (res.status == 413) {
      // A body over httplib's limits: 8192 bytes for a form (its own), 64 KiB for anything else (ours).
      const bool form = req.get_header_value("Content-Type").rfind("application/x-www-form-urlencoded", 0) == 0;
      res.status = 400;
      res.set_content(nlohmann::json({{"error", form ? fmt::format("sentence: a form body may have up to 8192 bytes; a sentence may have "
                                                                   "up to {} bytes, sent as a JSON body (Content-Type: application/json)",
                                                                   kMaxSentenceBytes)
                                                     : std::string("body: more than 65536 bytes; a request is a sentence and a model name")},
                                      {"field", form ? "sentence" : "body"}})
                          .dump(),
                      "application/json");
      return;
    }
    if (!res.body.empty()) return;
    const std::string what = res.status == 404 ? "no such page: " + req.path + " (the API: /api/models, /api/attend, /api/translate)"
                                               : fmt::format("HTTP {}", res.status);
    res.set_content(nlohmann::json({{"error", what}}).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), "application/json");
  });
  svr.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown error";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    res.status = 500;
    res.set_content(nlohmann::json({{"error", "internal error: " + what}}).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                    "application/json");
  });

  // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, with which a second server binds a port
  // already in use and the two share its connections unnoticed.
  svr.set_socket_options([](socket_t sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  int port = o.port;
  errno = 0;
  if (o.port == 0) {
    port = svr.bind_to_any_port(o.host);
    if (port <= 0) port = -1;
  } else if (!svr.bind_to_port(o.host, o.port)) {
    port = -1;
  }
  if (port < 0) {
    const int err = errno;
    throw InputError(fmt::format("--port: {} on {} cannot be used ({}); give another port, or --port 0 for any free one", o.port,
                                 visible_text(o.host), err ? std::strerror(err) : "bind failed"));
  }
  // Bound first, so that a port in use is said at once; then the models (a few seconds), while the
  // first clients wait in the listen queue.
  // Lanes: one per core by default (a request's forward pass uses one core well, two poorly), never more
  // than the requests answered at once.
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const int lanes = std::min(max_requests_, o.workers > 0 ? o.workers : static_cast<int>(cores));
  if (lanes > 1) {
    openblas_set_num_threads(1);
    cpu::set_threads(1);
  }
  load_models(o.models);
  make_lanes(lanes);
  if (StopOnSignals::requested()) {
    std::cerr << "attnlab: serve stopped before it started\n";
    return;
  }
  const std::string url = fmt::format("http://{}:{}/", o.host.find(':') != std::string::npos ? "[" + o.host + "]" : o.host, port);
  std::cout << visible_text(fmt::format("attnlab: serving the attention explorer at {} ({} model{}: {}; {} request{} computed at once); "
                                        "Ctrl-C stops it", url, models_.size(), models_.size() == 1 ? "" : "s", names(), lanes,
                                        lanes == 1 ? "" : "s"))
            << std::endl;
  if (o.open) open_in_browser(url);

  // The signal's flag, watched: svr.stop() until listening has ended (a stop that comes before the
  // listening starts does nothing, so it is repeated).
  std::atomic<bool> done{false};
  std::thread watcher([&] {
    while (!done.load()) {
      if (StopOnSignals::requested()) svr.stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  const bool ok = svr.listen_after_bind();
  done.store(true);
  watcher.join();
  if (!ok && !StopOnSignals::requested()) throw RuntimeError("the server stopped: accepting connections failed");
  std::cerr << "attnlab: serve stopped\n";
}

void run_serve(const ServeOptions& o) {
  LiveServer server(o);
  server.run(o);
}

}  // namespace

void setup_serve(CLI::App& app) {
  auto opts = std::make_shared<ServeOptions>();
  CLI::App* sub = app.add_subcommand("serve", "Serve the attention explorer as a live page: type a sentence, see every head");
  sub->add_option("-m,--model", opts->models,
                  "A model folder (or .ckpt file) to serve besides the shipped ones in data/models; repeat for more. Requests "
                  "name it by its folder's name");
  sub->add_option("--port", opts->port, "TCP port to listen on (0: any free port, printed at start)")
      ->transform(whole_number(0, 65535))
      ->capture_default_str();
  sub->add_option("--host", opts->host,
                  "Address to listen on; the default serves only this machine, any other prints a warning")
      ->capture_default_str();
  sub->add_flag("--open", opts->open, "Open the page in the default browser (xdg-open)");
  sub->add_option("--max-requests", opts->max_requests,
                  "Attention requests answered at once; more get HTTP 503 (busy) until one finishes")
      ->transform(whole_number(1, 64))
      ->capture_default_str();
  sub->add_option("--workers", opts->workers,
                  "Requests computed at the same time, each on one core with its own copy of the models (default: one per "
                  "core, at most --max-requests); 1: one at a time, each using every core")
      ->transform(whole_number(1, 64));
  sub->callback([opts] { run_serve(*opts); });
}

}  // namespace attnlab::cli
