#include "session/map_batch.h"

#include <fstream>
#include <memory>
#include <utility>

#include <nlohmann/json.hpp>

#include "model/error.h"
#include "model/json_bounds.h"

namespace gpumap {
namespace {

constexpr const char* kBatchVariables[] = {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"};

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::optional<std::string> from_hex(const std::string& hex) {
  if (hex.size() % 2) return std::nullopt;
  std::string out;
  for (size_t i = 0; i < hex.size(); i += 2) {
    int hi = hex_digit(hex[i]), lo = hex_digit(hex[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi << 4 | lo));
  }
  return out;
}

BatchCase parse_line(const std::string& text, size_t line, const std::string& name) {
  std::string where = "map --batch " + name + " line " + std::to_string(line) + ": ";
  const std::string hint =
      "each line is a JSON object such as {\"CUDA_VISIBLE_DEVICES\": \"1,0\", \"CUDA_DEVICE_ORDER\": null} "
      "(null: unset; NAME_hex: the value's bytes in hex)";
  if (auto why = json_bounds_error(text)) throw Error(kExitUsage, where + "the line is " + *why, hint);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) throw Error(kExitUsage, where + "not valid JSON (a value that is not UTF-8 goes under NAME_hex)", hint);
  if (!j.is_object()) throw Error(kExitUsage, where + "not a JSON object", hint);
  BatchCase c;
  c.line = line;
  for (const auto& [key, value] : j.items()) {
    bool hex = key.size() > 4 && key.compare(key.size() - 4, 4, "_hex") == 0;
    std::string var = hex ? key.substr(0, key.size() - 4) : key;
    auto* slot = var == kBatchVariables[0] ? &c.cuda_visible_devices
                 : var == kBatchVariables[1] ? &c.cuda_device_order
                                             : nullptr;
    if (!slot) throw Error(kExitUsage, where + "unknown key `" + key + "`", hint);
    if (slot->has_value()) throw Error(kExitUsage, where + var + " is given twice (plain and _hex)", hint);
    if (value.is_null() && !hex) {
      *slot = std::optional<std::string>();
      continue;
    }
    if (!value.is_string()) throw Error(kExitUsage, where + "`" + key + "` must be a string" + (hex ? "" : " or null"), hint);
    std::optional<std::string> v = value.get<std::string>();
    if (hex && !(v = from_hex(*v))) throw Error(kExitUsage, where + "`" + key + "` is not an even number of hex digits", hint);
    if (v->find('\0') != std::string::npos)
      throw Error(kExitUsage, where + var + " holds a NUL byte, which no environment value can", hint);
    *slot = std::move(v);
  }
  return c;
}

}  // namespace

std::vector<BatchCase> read_batch_file(const std::string& path, std::istream& stdin_stream) {
  if (path == "-") return read_batch(stdin_stream, path);
  std::ifstream file(path);
  if (!file) throw Error(kExitUsage, "map --batch " + path + ": cannot be opened", "give a readable file, or - for stdin");
  return read_batch(file, path);
}

namespace {

/// The next line of `in` into `text` (without its newline), reading at most `limit` + 1 bytes of
/// it: false at the end of the input; `too_long` when the line goes on past `limit` (the rest is
/// not read: /dev/zero is one endless line).
bool bounded_line(std::istream& in, std::string& text, size_t limit, bool& too_long) {
  text.clear();
  too_long = false;
  std::streambuf* buf = in.rdbuf();
  if (!buf) return false;
  for (;;) {
    int c = buf->sbumpc();
    if (c == std::char_traits<char>::eof()) {
      in.setstate(std::ios::eofbit);
      return !text.empty();
    }
    if (c == '\n') return true;
    if (text.size() == limit) {
      too_long = true;
      return true;
    }
    text.push_back(static_cast<char>(c));
  }
}

}  // namespace

std::vector<BatchCase> read_batch(std::istream& in, const std::string& name) {
  std::vector<BatchCase> out;
  std::string text;
  size_t held = 0;
  bool too_long = false;
  for (size_t line = 1; bounded_line(in, text, kBatchMaxLineBytes, too_long); ++line) {
    if (too_long)
      throw Error(kExitUsage,
                  "map --batch " + name + " line " + std::to_string(line) + ": longer than " +
                      std::to_string(kBatchMaxLineBytes) + " bytes (the limit of one line), so nothing was predicted",
                  "give one JSON object per line such as {\"CUDA_VISIBLE_DEVICES\": \"1,0\"} (an environment value is at "
                  "most 128 KiB, 256 KiB in _hex); is " + name + " the file you meant?");
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    out.push_back(parse_line(text, line, name));
    held += sizeof(BatchCase) + text.size();
    if (held > kBatchMaxHeldBytes)
      throw Error(kExitUsage,
                  "map --batch " + name + ": more than " + std::to_string(kBatchMaxHeldBytes >> 20) +
                      " MiB of cases by line " + std::to_string(line) +
                      " (every line is checked before the first answer, so they are held), so nothing was predicted",
                  "split the file into parts and run one --batch per part (lines of {\"CUDA_VISIBLE_DEVICES\": ...})");
  }
  return out;
}

Environment batch_environment(const Environment& base, const BatchCase& c) {
  Environment env = base;
  for (const auto& [var, value] : {std::pair{kBatchVariables[0], &c.cuda_visible_devices},
                                   std::pair{kBatchVariables[1], &c.cuda_device_order}}) {
    if (!value->has_value()) continue;
    if (**value) env.set(var, ***value);
    else env.unset(var);
  }
  return env;
}

MapBatchAnswer answer_map_batch(Session& session, const Environment& base, const MapBatchRequest& request,
                                std::istream& stdin_stream) {
  for (const auto& [given, option] : {std::pair{request.check, "--check"}, {request.probe, "--probe"}, {request.line, "--line"}})
    if (given)
      throw Error(kExitUsage, std::string("map: --batch and ") + option + " together: --batch only predicts",
                  "run the driver's side per value yourself (tools/device/suite.sh truth does), or drop --batch");
  if (!request.asked.empty())
    throw Error(kExitUsage, "map: --batch and cuda:N together", "drop the cuda:N arguments: each line is answered whole");
  auto cases = std::make_shared<const std::vector<BatchCase>>(read_batch_file(request.file, stdin_stream));
  return {[&session, base, cases, i = size_t{0}]() mutable -> std::optional<MapBatchCase> {
    if (i == cases->size()) return std::nullopt;
    const BatchCase& c = (*cases)[i++];
    Environment env = batch_environment(base, c);
    Mapping m = session.mapping(env, false);
    return MapBatchCase{c.line, std::move(env), std::move(m)};
  }};
}

}  // namespace gpumap
