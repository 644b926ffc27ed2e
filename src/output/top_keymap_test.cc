// The key tables of both `top` screens: one row per key, the help screens and docs/top.md made
// from them.
#include "output/top_keymap.h"

#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "model/text.h"
#include "output/fleet_top_view.h"
#include "output/top_view.h"

namespace gpumap {
namespace {

std::string docs_top() {
  std::ifstream in(std::string(GPUMAP_SOURCE_DIR) + "/docs/top.md");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The table rows ("| ... |") of docs/top.md's section that starts with `heading`.
std::vector<std::string> doc_rows(const std::string& docs, const std::string& heading) {
  std::vector<std::string> rows;
  size_t at = docs.find("\n" + heading + "\n");
  if (at == std::string::npos) return rows;
  bool in_table = false;
  for (const std::string& line : split(docs.substr(at + heading.size() + 2), '\n')) {
    if (line.rfind("#", 0) == 0) break;
    if (line.rfind("| key | does |", 0) == 0 || line.rfind("|---", 0) == 0) {
      in_table = true;
      continue;
    }
    if (in_table && line.rfind("| ", 0) == 0) rows.push_back(line);
    else if (in_table) break;
  }
  return rows;
}

/// The rows the docs must have, from the table, in order; on a mismatch the whole section to paste.
void expect_docs_match(const std::vector<KeyHelp>& table, const std::string& heading) {
  std::vector<std::string> want;
  for (const KeyHelp& k : table) want.push_back(key_help_markdown(k));
  std::string paste = heading + "\n\n| key | does |\n|---|---|\n";
  for (const std::string& w : want) paste += w + "\n";
  EXPECT_EQ(doc_rows(docs_top(), heading), want) << "docs/top.md's key table is made from output/top_keymap.cc; paste:\n"
                                                 << paste;
}

TEST(TopKeymap, DocsTopMdListsEveryKeyOfTheHostsTableAsTheTableSaysIt) {
  expect_docs_match(key_help(top_keymap()), "## Keys");
}

TEST(TopKeymap, DocsTopMdListsEveryKeyOfTheFleetsTableAsTheTableSaysIt) {
  expect_docs_match(key_help(fleet_top_keymap()), "### The fleet's keys (`top --prometheus`)");
}

template <typename Command>
void expect_one_row_per_key(const std::vector<KeyBinding<Command>>& table) {
  std::set<int> seen;
  for (const KeyBinding<Command>& b : table) {
    EXPECT_FALSE(b.keys.empty()) << b.label;
    for (int k : b.keys) {
      EXPECT_TRUE(seen.insert(k).second) << "key " << k << " is in two rows (" << b.label << ")";
      EXPECT_EQ(find_key(table, k), &b) << b.label;
    }
  }
}

TEST(TopKeymap, EachKeyIsInOneRow) {
  expect_one_row_per_key(top_keymap());
  expect_one_row_per_key(fleet_top_keymap());
  EXPECT_EQ(find_key(top_keymap(), 'x'), nullptr);
}

TEST(TopKeymap, TheHelpScreensSayEveryRowWithAHelpText) {
  TopView v;
  v.screen = TopView::Screen::kHelp;
  std::string host = top_text(render_top({}, {}, v, {}, 132, 0), false);
  for (const auto& b : top_keymap()) {
    if (!b.help) continue;  // the docs' only (Ctrl-Z)
    EXPECT_NE(host.find(top_fit(b.label, 21) + " " + split(b.help, ' ')[0]), std::string::npos) << b.label << "\n" << host;
  }
  FleetTopView f;
  f.screen = FleetTopView::Screen::kHelp;
  std::string fleet = top_text(render_fleet_top({}, f, {}, 132, 0), false);
  for (const auto& b : fleet_top_keymap())
    EXPECT_NE(fleet.find(top_fit(b.label, 21) + " " + split(b.help, ' ')[0]), std::string::npos) << b.label << "\n" << fleet;
}

TEST(TopKeymap, AKeysMarkdownPutsSingleCharactersInBackticks) {
  EXPECT_EQ(key_help_markdown({"q, Ctrl-C", "quit", "quit now"}), "| `q`, Ctrl-C | quit now |");
  EXPECT_EQ(key_help_markdown({"PgUp, PgDn", "", "page"}), "| PgUp, PgDn | page |");
}

}  // namespace
}  // namespace gpumap
