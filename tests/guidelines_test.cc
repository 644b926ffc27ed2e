// docs/coding-guidelines.md as tests, over the source tree (issue 57 item 4): no function over
// 80 lines outside the listed exceptions, command files within 80 lines, no JSON composed in cli/,
// one definition of the small helpers, and every "defined in" of docs/glossary.md a file that
// names the thing.  Each failure says file:function:lines and the fix; each exception list below
// is one table with a reason per row, to edit when code moves.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxFunctionLines = 80;  // coding-guidelines.md: "no function over 80 lines"
constexpr size_t kMaxCommandLines = 80;   // "A command (cli/cmd_*.cc, at most 80 lines)"

// Functions allowed over kMaxFunctionLines: {file under src/, function as the scanner names it
// (the name before its parameter list, with its class: `Foo::bar`)} -> why.  A table (data in a
// function, one row a line) is the usual reason; a row whose function is gone or back under the
// limit fails the test, so the list only holds what is true.
const std::map<std::pair<std::string, std::string>, std::string>& long_functions() {
  static const std::map<std::pair<std::string, std::string>, std::string> table = {
      {{"driver/nvml_reader.cc", "read_gpu"},
       "one GPU's NVML queries in a row, each keeping its failure as a GpuNote; not split yet (issue 57 listed it): "
       "split by query family (identity, memory, MIG, clocks)"},
      {{"driver/nvml_reader.cc", "read_unbounded"},
       "the snapshot's read order (init, count, each GPU, topology, processes) with its timings; not split yet: one "
       "function per phase"},
      {{"formats/host_file.cc", "parse_checked"},
       "the host file's keys checked one after another; not split yet: the keys' checks as a table"},
      {{"os/launch.cc", "launch_and_wait"},
       "fork, the child's set-up (CPU mask, environment, exec) and the wait with its signals in one place; not split "
       "yet: the child's side apart"},
      {{"output/fleet_view.cc", "fleet_text"},
       "the fleet helper's file while issue 57 was built: split node, job and cause sections"},
      {{"output/fleet_view.cc", "fleet_json"},
       "the fleet helper's file while issue 57 was built: the document's parts as functions"},
      {{"output/manual.cc", "bash_completion"},
       "the bash completion script as text, line by line (a template more than logic)"},
      {{"output/manual.cc", "fish_completion"},
       "the fish completion script as text, line by line (a template more than logic)"},
      {{"output/ps_view.cc", "ps_frame_text"},
       "the ps table's columns and the lines under it; not split yet: the columns as a table like top's"},
      {{"output/render.cc", "render_table"},
       "the table layout (widths, fitting to the terminal, alignment); one line over, not split yet"},
      {{"output/top_detail.cc", "process_detail"},
       "the faults helper's file while issue 57 was built: one process's detail panel, section by section"},
      {{"prom/fleet_join.cc", "finish"},
       "the fleet helper's file while issue 57 was built: the join's last pass (nodes, jobs, causes)"},
      {{"resolve/cuda_rules.cc", "predict_cuda_view"},
       "CUDA's parsing of CUDA_VISIBLE_DEVICES step by step in the driver's order, each step a measured rule "
       "(docs/driver-rules.md); not split yet"},
      {{"resolve/framework_view.cc", "predict_torch_view"},
       "PyTorch's own reading of CUDA_VISIBLE_DEVICES step by step (measured); not split yet"},
      {{"resolve/picker.cc", "pick_gpus"},
       "the picker's filters, order and NVLink grouping in one pass; not split yet: one function per stage"},
      {{"resolve/process_view.cc", "join_ps"},
       "the ps join (process, environment, CUDA view, ranks) per row; not split yet: one function per row's part"},
      {{"session/job_map.cc", "update_job_map"}, "the job map's lock, read, merge and atomic write; not split yet"},
      {{"session/launch.cc", "plan_bind"}, "bind's rank, allocation and lease decisions in order; not split yet"},
      {{"session/which.cc", "which_gpus"}, "which's refusals, then the lines for each layer; not split yet"},
  };
  return table;
}

// Command files allowed over kMaxCommandLines, each with why.
const std::map<std::string, std::string>& long_commands() {
  static const std::map<std::string, std::string> table = {
      {"cmd_serve.cc", "the serve helper's file while issue 57 was built: its option checks belong in serve's options"},
  };
  return table;
}

// Files of cli/ allowed to build JSON, each with why.  A command renders its answer with output/;
// what is left here is the CLI's own frame around every command, not an operation's answer.
const std::map<std::string, std::string>& cli_json() {
  static const std::map<std::string, std::string> table = {
      {"cli/context.cc",
       "the error document every command writes on a failure with --json (one shape for all), "
       "and --json's re-indented copy of what a child wrote"},
      {"cli/command.h", "report_launch takes the launch document output/ made, to write it beside the text"},
      {"cli/main.cc",
       "the CLI's own documents: `--version --json`, `help --json`'s entry of the reference, and the "
       "error document of a usage error before any command runs"},
  };
  return table;
}

// Small helpers with one home: name -> the one file under src/ that defines it.  A second
// definition is a copy that drifts (lower() was defined six times: issue 57).
struct Helper {
  const char* name;
  const char* home;
};
const std::vector<Helper>& helpers() {
  static const std::vector<Helper> table = {
      {"lower", "model/text.cc"}, {"trim", "model/text.cc"},       {"split", "model/text.cc"},
      {"join", "model/text.cc"},  {"all_digits", "model/text.cc"}, {"shell_word", "model/text.cc"},
  };
  return table;
}
// Definitions of a helper outside its home that are allowed for now: {file, name} -> why.
const std::map<std::pair<std::string, std::string>, std::string>& helper_copies() {
  static const std::map<std::pair<std::string, std::string>, std::string> table = {
      {{"output/top_columns.cc", "lower"},
       "another helper's file while issue 57 was built: delete its lower() (model/ascii.h's ascii::lower is the same)"},
      {{"env/pod_cgroup.cc", "split"},
       "std::getline's reading drops a last empty piece (\"a/\" is one piece, model/text.h's split makes two): "
       "moving to split() changes which cgroup paths and pod UIDs it accepts; do it with pod_cgroup_test"},
      {{"findings/fix_line.cc", "shell_word"},
       "leaves `@` and `%` quoted where model/text.h's shell_word does not: moving to it changes fix lines "
       "users paste (the golden answers show which)"},
  };
  return table;
}

bool is_test_file(const fs::path& p) {
  std::string name = p.filename().string();
  return name.ends_with("_test.cc") || name.ends_with("_testing.h");
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The sources of src/ (.cc, .h), test files aside, by their path under src/.
std::vector<std::pair<std::string, fs::path>> sources() {
  const fs::path src = fs::path(GPUMAP_SOURCE_DIR) / "src";
  std::vector<std::pair<std::string, fs::path>> out;
  for (const fs::directory_entry& f : fs::recursive_directory_iterator(src)) {
    std::string ext = f.path().extension().string();
    if (!f.is_regular_file() || is_test_file(f.path()) || (ext != ".cc" && ext != ".h")) continue;
    out.emplace_back(fs::relative(f.path(), src).string(), f.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// `text` with comments, string and character literals (raw strings too) and preprocessor lines
// blanked to spaces, newlines kept: what is left is the code's braces, parentheses and words, at
// the same line numbers.
std::string code_only(const std::string& text) {
  std::string out = text;
  auto blank = [&](size_t from, size_t to) {
    for (size_t k = from; k < to && k < out.size(); ++k)
      if (out[k] != '\n') out[k] = ' ';
  };
  size_t i = 0, n = text.size();
  bool line_start = true;
  while (i < n) {
    char c = text[i];
    if (line_start && (c == ' ' || c == '\t')) {
      ++i;
      continue;
    }
    if (line_start && c == '#') {  // a preprocessor line, with its continuations
      size_t e = i;
      while (e < n && (text[e] != '\n' || (e > 0 && text[e - 1] == '\\'))) ++e;
      blank(i, e);
      i = e;
      continue;
    }
    line_start = c == '\n';
    if (c == '/' && i + 1 < n && text[i + 1] == '/') {
      size_t e = text.find('\n', i);
      e = e == std::string::npos ? n : e;
      blank(i, e);
      i = e;
    } else if (c == '/' && i + 1 < n && text[i + 1] == '*') {
      size_t e = text.find("*/", i + 2);
      e = e == std::string::npos ? n : e + 2;
      blank(i, e);
      i = e;
    } else if (c == 'R' && i + 1 < n && text[i + 1] == '"' &&
               (i == 0 || !(std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_'))) {
      size_t open = text.find('(', i + 2);
      std::string close = ")" + text.substr(i + 2, open - i - 2) + "\"";
      size_t e = text.find(close, open);
      e = e == std::string::npos ? n : e + close.size();
      blank(i, e);
      i = e;
    } else if (c == '"' || (c == '\'' && !(i > 0 && std::isxdigit(static_cast<unsigned char>(text[i - 1])) &&
                                           i + 1 < n && std::isxdigit(static_cast<unsigned char>(text[i + 1]))))) {
      // (a ' between two hex digits is a digit separator: 1'000)
      size_t e = i + 1;
      while (e < n && text[e] != c && text[e] != '\n') e += text[e] == '\\' ? 2 : 1;
      blank(i, e + 1);
      i = e + 1;
    } else {
      ++i;
    }
  }
  return out;
}

// One function the scanner found: its name, where its body's braces are, how many lines they span.
struct FunctionSpan {
  std::string name;
  size_t first_line;  // the line of the body's `{`
  size_t lines;       // from the `{` to the `}`, both lines counted
};

// The functions of a file, by counting braces in code_only(text).  A `{` opened where a function
// may begin (at namespace scope or in a class body) opens a function when what comes before it
// since the last `;`, `{` or `}` ends with its parameter list (`)`, then const, noexcept,
// override, a trailing return type) or with a constructor's member initialisers; `namespace`,
// `class`, `struct`, `union`, `enum` and `extern "C"` open scopes to look inside; anything else
// (`= {`: data, a table) is skipped whole.  A lambda inside a function counts as its lines; a
// lambda assigned at namespace scope counts as a function of its own.  What it cannot see:
// functions made by macros.
std::vector<FunctionSpan> functions_of(const std::string& text) {
  enum Kind { kScope, kFunction, kOther };
  std::string code = code_only(text);
  std::vector<FunctionSpan> out;
  std::vector<std::pair<Kind, size_t>> stack;  // open braces: kind, line (functions: index in out)
  std::string head;                            // the code since the last `;` `{` `}` at a scope where functions begin
  size_t line = 1;
  static const std::regex scope_re(R"((^|\W)(namespace|class|struct|union|enum)(\W|$)|extern\s*$)");
  static const std::regex function_re(
      R"(\)\s*(const|noexcept|override|final|mutable|volatile|&|&&|\s|->[\w\s:<>,*&]+|noexcept\s*\([^)]*\))*$)");
  static const std::regex init_re(R"(\)\s*(noexcept\s*)?:[^:])");  // Foo() : a_(1), b_{2}
  auto at_scope = [&] { return stack.empty() || stack.back().first == kScope; };
  auto name_of = [](const std::string& h) {
    // the name before the first top-level `(`: `std::string Foo::bar(int) const` -> Foo::bar
    size_t p = h.find('(');
    std::string before = h.substr(0, p);
    static const std::regex name_re(R"(((?:[~\w]+::)*operator\s*[^\s(]+|[~\w:]+)\s*$)");
    std::smatch m;
    if (std::regex_search(before, m, name_re)) return m[1].str();
    return std::string("(lambda)");
  };
  for (size_t i = 0; i < code.size(); ++i) {
    char c = code[i];
    if (c == '\n') ++line;
    if (!at_scope()) {
      if (c == '{') stack.push_back({kOther, line});
      if (c == '}') {
        Kind k = stack.back().first;
        size_t at = stack.back().second;
        stack.pop_back();
        if (k == kFunction) out[at].lines = line - out[at].first_line + 1;
        if (at_scope()) head.clear();
      }
      continue;
    }
    if (c == ';') {
      head.clear();
    } else if (c == '}') {
      if (!stack.empty()) stack.pop_back();
      head.clear();
    } else if (c == '{') {
      std::string h = head;
      while (!h.empty() && std::isspace(static_cast<unsigned char>(h.back()))) h.pop_back();
      bool in_init = std::regex_search(h, init_re);
      bool member_init =
          in_init && !h.empty() && (std::isalnum(static_cast<unsigned char>(h.back())) || h.back() == '_');
      if (member_init) {  // `a_{1}` among a constructor's initialisers: part of the head
        size_t depth = 1, j = i + 1;
        for (; j < code.size() && depth; ++j) {
          if (code[j] == '{') ++depth;
          if (code[j] == '}') --depth;
          if (code[j] == '\n') ++line;
        }
        head += code.substr(i, j - i);
        i = j - 1;
        continue;
      }
      if (!std::regex_search(h, function_re) && !(in_init && (h.back() == '}' || h.back() == ')')) &&
          std::regex_search(h, scope_re) && h.find('=') == std::string::npos) {
        stack.push_back({kScope, line});
      } else if (std::regex_search(h, function_re) || (in_init && (h.back() == '}' || h.back() == ')'))) {
        out.push_back({name_of(h), line, 1});
        stack.push_back({kFunction, out.size() - 1});
      } else {
        stack.push_back({kOther, line});
      }
      head.clear();
    } else {
      head += c;
    }
  }
  return out;
}

TEST(Guidelines, TheScannerCountsFunctionsAndSkipsTablesCommentsAndStrings) {
  std::string text =
      "#include <x>\n"
      "namespace a {\n"
      "namespace {\n"
      "const Row kRows[] = {\n"
      "  {1, \"}\"},\n"
      "};\n"
      "}  // namespace {\n"
      "int Foo::bar(int x) const {\n"
      "  auto f = [](int y) { return y; };  // }\n"
      "  /* { */ return f(x);\n"
      "}\n"
      "struct S : Base {\n"
      "  S() : a_{1}, b_(2) {\n"
      "    const char* s = R\"x(})x\";\n"
      "  }\n"
      "  int a_, b_;\n"
      "};\n"
      "}  // namespace a\n";
  std::vector<FunctionSpan> f = functions_of(text);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].name, "Foo::bar");
  EXPECT_EQ(f[0].first_line, 8u);
  EXPECT_EQ(f[0].lines, 4u);
  EXPECT_EQ(f[1].name, "S");
  EXPECT_EQ(f[1].first_line, 13u);
  EXPECT_EQ(f[1].lines, 3u);
}

TEST(Guidelines, NoFunctionOverEightyLinesOutsideTheListedExceptions) {
  std::set<std::pair<std::string, std::string>> seen;
  size_t files = 0, functions = 0;
  for (const auto& [rel, path] : sources()) {
    ++files;
    for (const FunctionSpan& f : functions_of(read(path))) {
      ++functions;
      auto key = std::make_pair(rel, f.name);
      if (f.lines <= kMaxFunctionLines) continue;
      seen.insert(key);
      if (long_functions().count(key)) continue;
      ADD_FAILURE() << "src/" << rel << ":" << f.name << ": " << f.lines << " lines (from line " << f.first_line
                    << "), over " << kMaxFunctionLines
                    << ": split it (or make its data a table); a table in a function may be listed, with its reason, "
                       "in long_functions() of tests/guidelines_test.cc";
    }
  }
  for (const auto& [key, why] : long_functions())
    EXPECT_TRUE(seen.count(key)) << "long_functions() lists src/" << key.first << ":" << key.second
                                 << ", which is gone or within " << kMaxFunctionLines
                                 << " lines now: take it off the list";
  EXPECT_GT(files, 300u);  // the tree was found
  EXPECT_GT(functions, 1500u);
}

TEST(Guidelines, CommandFilesWithinEightyLines) {
  const fs::path cli = fs::path(GPUMAP_SOURCE_DIR) / "src" / "cli";
  size_t commands = 0;
  for (const fs::directory_entry& f : fs::directory_iterator(cli)) {
    std::string name = f.path().filename().string();
    if (!name.starts_with("cmd_") || f.path().extension() != ".cc") continue;
    ++commands;
    std::string text = read(f.path());
    size_t lines = std::count(text.begin(), text.end(), '\n');
    if (long_commands().count(name)) {
      EXPECT_GT(lines, kMaxCommandLines) << "long_commands() lists src/cli/" << name << ", within " << kMaxCommandLines
                                         << " lines now: take it off the list";
      continue;
    }
    EXPECT_LE(lines, kMaxCommandLines) << "src/cli/" << name << ": " << lines << " lines, over " << kMaxCommandLines
                                       << ": a command parses, makes one session call and renders (move logic to "
                                          "session/, text to output/, a long description to cli/command_help.cc)";
  }
  EXPECT_GT(commands, 15u);
}

TEST(Guidelines, NoJsonComposedInCliOutsideTheListedFiles) {
  // Building or writing a document: the Json type (formats/json.h), nlohmann's, dump() (a view's
  // render_<operation> writes the form asked), or the JSON headers.
  const std::regex json_re(
      R"((^|[^\w:])(Json|nlohmann::|ordered_json)\b|(^|[^\w:.>])dump\s*\(|formats/json\.h|nlohmann/json)");
  std::set<std::string> seen;
  for (const auto& [rel, path] : sources()) {
    if (!rel.starts_with("cli/")) continue;
    std::string code = read(path);
    // The include lines are blanked by code_only; look for the header in the text first.
    bool includes = code.find("formats/json.h") != std::string::npos || code.find("nlohmann/json") != std::string::npos;
    std::istringstream in(code_only(code));
    std::string l;
    size_t n = 0, first = 0;
    for (size_t k = 1; std::getline(in, l); ++k)
      if (std::regex_search(l, json_re)) n++, first = first ? first : k;
    if (!n && !includes) continue;
    seen.insert(rel);
    if (cli_json().count(rel)) continue;
    ADD_FAILURE() << "src/" << rel << (first ? ":" + std::to_string(first) : std::string()) << ": builds JSON (" << n
                  << " lines name Json" << (includes ? ", and it includes a JSON header" : "")
                  << "): a command hands its answer to output/'s renderer (render_<operation>), which writes the JSON; "
                     "or list the file, with its reason, in cli_json() of tests/guidelines_test.cc";
  }
  for (const auto& [rel, why] : cli_json())
    EXPECT_TRUE(seen.count(rel)) << "cli_json() lists src/" << rel
                                 << ", which builds no JSON now: take it off the list";
}

TEST(Guidelines, EachSmallHelperHasOneDefinition) {
  for (const Helper& h : helpers()) {
    // A definition: the name, its parameter list, then its body (a declaration ends in `;`).
    const std::regex def_re(std::string(R"((^|[^\w:.>])(std::string|std::vector<std::string>|bool|void)\s+(\w+::)?)") +
                            h.name + R"(\s*\([^;{)]*\)\s*\{)");
    std::vector<std::string> where;
    for (const auto& [rel, path] : sources()) {
      std::string code = code_only(read(path));
      if (!std::regex_search(code, def_re)) continue;
      if (rel == h.home || helper_copies().count({rel, h.name})) continue;
      where.push_back(rel);
    }
    for (const std::string& rel : where)
      ADD_FAILURE() << "src/" << rel << ":" << h.name << ": a second definition of " << h.name
                    << "(), whose home is src/" << h.home
                    << ": delete it and use that one (`using ascii::lower;` for lower)";
    EXPECT_TRUE(std::regex_search(code_only(read(fs::path(GPUMAP_SOURCE_DIR) / "src" / h.home)), def_re))
        << h.name << "() is not defined in src/" << h.home << " any more: update helpers() in tests/guidelines_test.cc";
  }
  for (const auto& [key, why] : helper_copies())
    EXPECT_TRUE(fs::exists(fs::path(GPUMAP_SOURCE_DIR) / "src" / key.first))
        << "helper_copies() lists src/" << key.first << ", which is gone: take it off the list";
}

// docs/glossary.md's "code (defined in)" column: `Name`, `other` (`src/a.h`, `src/b.h`).  Each
// path exists, and each name before it (its last part: `Gpu::nvml_index` -> nvml_index) is in
// one of those files.  `src/answer/<operation>_answer.h` stands for every answer header.
TEST(Guidelines, EveryGlossaryEntryIsDefinedWhereItSays) {
  const fs::path root = GPUMAP_SOURCE_DIR;
  std::ifstream in(root / "docs" / "glossary.md");
  ASSERT_TRUE(in) << "docs/glossary.md";
  const std::regex group_re(R"(((?:`[^`]+`[^`(]*?)+)\(((?:`src/[^`]+`(?:, )?)+)\))");
  const std::regex quoted_re("`([^`]+)`");
  const std::regex ident_re(R"(^[A-Za-z_]\w*$)");
  std::string line;
  size_t entries = 0, names = 0;
  while (std::getline(in, line)) {
    if (!line.starts_with("| **")) continue;
    ++entries;
    std::string word = line.substr(4, line.find("**", 4) - 4);
    size_t a = line.find(" | "), b = line.find(" | ", a + 3);
    std::string code = line.substr(a + 3, b - a - 3);
    for (std::sregex_iterator g(code.begin(), code.end(), group_re), end; g != end; ++g) {
      std::string texts;
      std::string paths = (*g)[2];
      for (std::sregex_iterator p(paths.begin(), paths.end(), quoted_re); p != end; ++p) {
        std::string path = (*p)[1];
        std::vector<fs::path> files;
        if (size_t t = path.find("<operation>"); t != std::string::npos) {
          std::string before = path.substr(0, t), after = path.substr(t + 11);
          for (const fs::directory_entry& f : fs::directory_iterator(root / fs::path(before).parent_path())) {
            std::string rel = fs::relative(f.path(), root).string();
            if (rel.starts_with(before) && rel.ends_with(after)) files.push_back(f.path());
          }
        } else {
          files.push_back(root / path);
        }
        EXPECT_FALSE(files.empty() || !fs::exists(files[0]))
            << "docs/glossary.md, " << word << ": `" << path << "` does not exist: write where it is defined now";
        for (const fs::path& f : files)
          if (fs::exists(f)) texts += read(f);
      }
      std::string before = (*g)[1];
      for (std::sregex_iterator q(before.begin(), before.end(), quoted_re); q != end; ++q) {
        std::string name = (*q)[1];
        name = name.substr(0, name.find('('));
        if (size_t c = name.rfind("::"); c != std::string::npos) name = name.substr(c + 2);
        if (!std::regex_match(name, ident_re)) continue;  // `gpumap verify`, `"live"`: words, not names
        ++names;
        EXPECT_TRUE(std::regex_search(texts, std::regex("\\b" + name + "\\b")))
            << "docs/glossary.md, " << word << ": `" << (*q)[1] << "` is in none of " << paths
            << ": write the file that defines it";
      }
    }
  }
  EXPECT_GT(entries, 25u);
  EXPECT_GT(names, 60u);
}

}  // namespace
