#include "kube/cdi_files.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <sstream>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/yaml.h>

#include "formats/cdi_spec.h"

namespace gpumap {
namespace {

constexpr int kMaxDepth = 64;
using Clock = std::chrono::steady_clock;

std::string seconds(double s) {
  std::ostringstream o;
  o << s << " s";
  return o.str();
}

std::string mib(size_t bytes) {
  return bytes % (1u << 20) == 0 ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes) + " bytes";
}

// What is left of the run's budget while the files are read.
struct Left {
  const CdiBudget& budget;
  size_t bytes, nodes;
  Clock::time_point deadline;
  bool out_of_time() const { return Clock::now() > deadline; }
};

constexpr size_t kMaxTextDepth = 256;

// At least the nesting depth yaml-cpp would recurse to: the deepest open flow brackets (`[`, `{`;
// in quotes too: a bound, not a parse) plus the most any line adds by its indentation and its block
// indicators ("- ", "? ", ": ").  A real spec: under 20.
size_t nesting_bound(const std::string& text) {
  size_t flow = 0, flow_max = 0, line_max = 0, line = 0;
  bool at_start = true;
  for (size_t i = 0; i < text.size(); ++i) {
    char ch = text[i];
    char next = i + 1 < text.size() ? text[i + 1] : '\n';
    if (ch == '\n') {
      line_max = std::max(line_max, line);
      line = 0;
      at_start = true;
      continue;
    }
    if (ch == '[' || ch == '{') flow_max = std::max(flow_max, ++flow);
    if ((ch == ']' || ch == '}') && flow > 0) --flow;
    if (at_start && ch == ' ') ++line;
    else at_start = false;
    if ((ch == '-' || ch == '?' || ch == ':') && (next == ' ' || next == '\t' || next == '\n')) ++line;
  }
  return flow_max + std::max(line_max, line);
}

// Thrown by the counting passes at a cap (a message for the file's problem).
struct OverBudget {
  std::string why;
};

// Counts nodes as the parser meets them; at `cap` or past the run's deadline, stops the parse.
struct NodeCounter {
  size_t cap, seen = 0;
  const Left& left;
  std::string cap_why;
  void one() {
    if (++seen > cap) throw OverBudget{cap_why};
    if (seen % 4096 == 0 && left.out_of_time())
      throw OverBudget{"not read whole within the " + seconds(left.budget.run_seconds) + " for every spec file"};
  }
};

// yaml-cpp's events, counted: nothing is built (YAML::Load of a million-item list holds ~570 MB).
struct YamlCounter : YAML::EventHandler {
  NodeCounter& n;
  explicit YamlCounter(NodeCounter& c) : n(c) {}
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override { n.one(); }
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override { n.one(); }
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override { n.one(); }
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override { n.one(); }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override { n.one(); }
  void OnMapEnd() override {}
};

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

/// The file's bytes, or why not: a FIFO or device is never opened for blocking reads; the size is
/// checked against the file's and the run's budget before a byte is read.
std::string read_spec(const std::string& path, Left& left, std::string& error) {
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    error = std::string("cannot open it: ") + strerror(errno);
    return "";
  }
  struct stat st {};
  std::string out;
  size_t cap = std::min(left.budget.file_bytes, left.bytes);
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    error = "not a regular file";
  } else if (static_cast<size_t>(st.st_size) > left.budget.file_bytes) {
    error = "larger than " + mib(left.budget.file_bytes) + " (" + std::to_string(st.st_size) + " bytes): not read";
  } else if (left.out_of_time()) {  // (what is refused without reading it is said whatever the time)
    error = "not read: the " + seconds(left.budget.run_seconds) + " for every spec file went to the smaller ones before it";
  } else if (static_cast<size_t>(st.st_size) > cap) {
    error = "not read: the smaller spec files before it used the " + mib(left.budget.run_bytes) +
            " read for every spec file (" + std::to_string(st.st_size) + " bytes)";
  } else {
    out.reserve(static_cast<size_t>(st.st_size));
    char buf[65536];
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0 && out.size() <= cap) out.append(buf, static_cast<size_t>(n));
    if (n < 0) error = std::string("cannot read it: ") + strerror(errno);
    if (out.size() > cap) error = "grew past " + mib(cap) + " while read: not read";
  }
  close(fd);
  if (!error.empty()) return "";
  left.bytes -= out.size();
  return out;
}

/// A YAML tree as JSON (scalars as strings: every field gpumap reads is a string).
Json to_json(const YAML::Node& n, size_t& budget, int depth, const Left& left) {
  if (budget == 0 || depth > kMaxDepth) throw std::invalid_argument("nested or aliased past what a CDI spec needs");
  if (--budget % 4096 == 0 && left.out_of_time())
    throw OverBudget{"not read whole within the " + seconds(left.budget.run_seconds) + " for every spec file"};
  switch (n.Type()) {
    case YAML::NodeType::Map: {
      Json o = Json::object();
      for (const auto& kv : n) o[kv.first.as<std::string>()] = to_json(kv.second, budget, depth + 1, left);
      return o;
    }
    case YAML::NodeType::Sequence: {
      Json a = Json::array();
      for (const auto& v : n) a.push_back(to_json(v, budget, depth + 1, left));
      return a;
    }
    case YAML::NodeType::Scalar: return n.as<std::string>();
    default: return nullptr;
  }
}

CdiFileRead read_file(const std::string& path, size_t priority, Left& left) {
  CdiFileRead f{path, priority, {}, ""};
  std::string text = read_spec(path, left, f.error);
  if (!f.error.empty()) return f;
  // The nodes are counted first, by a pass that builds nothing and stops at the cap.
  NodeCounter count{std::min(left.budget.file_nodes, left.nodes), 0, left, ""};
  count.cap_why = left.nodes < left.budget.file_nodes
                      ? "not parsed: the smaller spec files before it used the " + std::to_string(left.budget.run_nodes) +
                            " YAML or JSON nodes for every spec file"
                      : "more than " + std::to_string(left.budget.file_nodes) + " YAML or JSON nodes: not parsed";
  try {
    Json doc;
    if (ends_with(path, ".json")) {
      // (the callback counts each value as the parser meets it, the tree stops growing at the cap)
      doc = Json::parse(
          text,
          [&](int depth, Json::parse_event_t e, Json&) {
            if (depth > static_cast<int>(kMaxTextDepth))
              throw OverBudget{"nested deeper than " + std::to_string(kMaxTextDepth) + ": not parsed"};
            if (e == Json::parse_event_t::value || e == Json::parse_event_t::object_start ||
                e == Json::parse_event_t::array_start)
              count.one();
            return true;
          },
          false);
      if (doc.is_discarded()) throw std::invalid_argument("not valid JSON");
    } else {
      // yaml-cpp holds a whole flow collection's tokens before its first event: bounded first by
      // the characters every node needs one or two of.
      size_t structure = 0;
      for (char ch : text) structure += ch == ',' || ch == '[' || ch == '{' || ch == '-' || ch == ':' || ch == '?' || ch == '\n';
      // yaml-cpp parses nested collections by recursion (0.6, the portable build's, without a depth
      // limit: 100 000 `[` overflow its stack): a bound on the depth from the text, before it looks.
      if (size_t depth = nesting_bound(text); depth > kMaxTextDepth)
        throw OverBudget{"nested deeper than " + std::to_string(kMaxTextDepth) + " (a bound of " + std::to_string(depth) +
                         " from its brackets, indentation and indicators): not parsed"};
      if (structure > 3 * count.cap)
        throw OverBudget{count.cap < left.budget.file_nodes
                             ? count.cap_why
                             : "more than " + std::to_string(3 * left.budget.file_nodes) +
                                   " YAML structure characters (, [ { - : ? and line ends): not parsed"};
      {
        std::istringstream in(text);
        YAML::Parser parser(in);
        YamlCounter events(count);
        parser.HandleNextDocument(events);  // the first document, as YAML::Load reads
      }
      size_t budget = std::min(left.budget.file_nodes, left.nodes);  // aliases expanded (a billion laughs)
      doc = to_json(YAML::Load(text), budget, 0, left);
    }
    f.devices = parse_cdi_spec(doc, path);
  } catch (const OverBudget& e) {
    f.error = e.why;
  } catch (const std::invalid_argument& e) {
    std::string what = e.what();
    f.error = what.rfind(path + ": ", 0) == 0 ? what.substr(path.size() + 2) : what;
  } catch (const std::exception& e) {  // YAML::Exception and the like
    f.error = std::string("not valid YAML: ") + e.what();
  }
  left.nodes -= std::min(left.nodes, count.seen);
  return f;
}

}  // namespace

CdiSpecs read_cdi_specs(const std::vector<std::string>& dirs, const CdiBudget& budget) {
  struct Candidate {
    std::string path;
    size_t priority;
    off_t size;
  };
  std::vector<Candidate> found;
  std::vector<CdiFileRead> files;
  for (size_t i = 0; i < dirs.size(); ++i) {
    DIR* d = opendir(dirs[i].c_str());
    if (!d) {
      if (errno != ENOENT) files.push_back({dirs[i], i, {}, std::string("cannot list the folder: ") + strerror(errno)});
      continue;
    }
    // Every spec name of the folder, so the ones past kCdiFolderFiles (a folder of specs, not of
    // everything) are the last by name, each said, never cut silently in readdir order; past
    // kCdiFolderNames the folder is not even listed further (one problem says so).
    std::vector<std::string> names;
    bool listed_all = true;
    while (dirent* e = readdir(d)) {
      std::string name = e->d_name;
      if (name[0] != '.' && (ends_with(name, ".json") || ends_with(name, ".yaml"))) names.push_back(name);
      if (names.size() >= kCdiFolderNames) {
        listed_all = readdir(d) == nullptr;
        break;
      }
    }
    closedir(d);
    std::sort(names.begin(), names.end());
    if (names.size() > kCdiFolderFiles) {
      for (size_t k = kCdiFolderFiles; k < names.size(); ++k)
        files.push_back({dirs[i] + "/" + names[k], i, {},
                         "not read: the folder holds more than " + std::to_string(kCdiFolderFiles) +
                             " spec files (*.json, *.yaml) and gpumap reads the first " + std::to_string(kCdiFolderFiles) +
                             " by name"});
      names.resize(kCdiFolderFiles);
    }
    if (!listed_all)
      files.push_back({dirs[i], i, {},
                       "holds more than " + std::to_string(kCdiFolderNames) +
                           " names: the rest were not listed (nor read); a CDI folder holds a few spec files"});
    for (const std::string& name : names) {
      struct stat st {};
      std::string path = dirs[i] + "/" + name;
      found.push_back({path, i, stat(path.c_str(), &st) == 0 ? st.st_size : 0});
    }
  }
  // Smallest first (the order of the folders and names kept for the merge): what the run's budget
  // leaves out is the largest files, never the small specs a huge one sorts before.
  std::vector<size_t> order(found.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return found[a].size < found[b].size; });
  Left left{budget, budget.run_bytes, budget.run_nodes,
            Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(budget.run_seconds))};
  std::vector<CdiFileRead> read(found.size());
  for (size_t k : order) read[k] = read_file(found[k].path, found[k].priority, left);
  for (CdiFileRead& f : read) files.push_back(std::move(f));
  return merge_cdi_files(dirs, files);
}

}  // namespace gpumap
