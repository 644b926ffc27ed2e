// Small things found on the way (issue 8, point 12): each one a user ran into.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_helpers.h"

namespace gpumap::testing {
namespace {

using json = nlohmann::json;

TEST(CliSmall, SimulateWinsOverGpumapSimulateInTheProbeChildToo) {
  // The child that asks the driver used to read $GPUMAP_SIMULATE and answer for another host.
  CliRun r = gpumap_here({"map", "--simulate", "seed-mixed", "--check"}, {"GPUMAP_SIMULATE=h200x2"});
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("AGREE"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("DISAGREE"), std::string::npos) << r.out;
}

TEST(CliSmall, UnknownCommandSuggestsTheClosestOnce) {
  CliRun r = gpumap_here({"lst"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err.rfind("gpumap: error: unknown command `lst` (did you mean `list`?)\n", 0), 0u) << r.err;
  CliRun far = gpumap_here({"frobnicate"});
  EXPECT_EQ(far.err.find("did you mean"), std::string::npos) << far.err;
}

TEST(CliSmall, RunAndBindSayTheCommandGoesAfterDashDash) {
  CliRun r = gpumap_here({"run", "--simulate", "h200x2", "python3", "x.py"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("the command to run goes after `--`"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gpumap run [options] -- python3 x.py"), std::string::npos) << r.err;
  CliRun b = gpumap_here({"bind", "--simulate", "h200x2", "python3"}, {"LOCAL_RANK=0"});
  EXPECT_EQ(b.code, 2);
  EXPECT_NE(b.err.find("goes after `--`"), std::string::npos) << b.err;
}

// verify and which refusing a GPU named twice, and which without a GPU: src/session/verify_test.cc
// and which_test.cc, in process.

// `--include "$GPUS"` with GPUS unset must not mean "any GPU": the run would take someone else's.
TEST(CliSmall, AnEmptyIncludeOrExcludeIsAUsageErrorNotAnyGpu) {
  std::string locks = temp_dir("locks");
  for (const char* opt : {"--include", "--exclude"})
    for (const char* value : {"", " ", ",,"}) {
      for (std::vector<std::string> args : {std::vector<std::string>{"pick"}, {"run"}}) {
        args.insert(args.end(), {"--simulate", "h200x2", opt, value});
        if (args[0] == "run") args.insert(args.end(), {"--", "true"});
        CliRun r = gpumap_here(args, {"GPUMAP_LOCK_DIR=" + locks});
        EXPECT_EQ(r.code, 2) << args[0] << " " << opt << " '" << value << "': " << r.out << r.err;
        EXPECT_NE(r.err.find(std::string(opt) + " `" + value + "` names no GPU"), std::string::npos) << r.err;
      }
    }
  CliRun ok = gpumap_here({"pick", "--simulate", "h200x2", "--include", "1", "--format", "uuid"}, {"GPUMAP_LOCK_DIR=" + locks});
  EXPECT_EQ(ok.code, 0) << ok.err;
}

TEST(CliSmall, PreciseErrorsForBadSimulatedHosts) {
  CliRun dir = gpumap_here({"list", "--simulate", temp_dir("a-dir")});
  EXPECT_EQ(dir.code, 2);
  EXPECT_NE(dir.err.find("is a directory, not a host file"), std::string::npos) << dir.err;
  CliRun uuid = gpumap_here({"list", "--simulate",
                        write_temp_file("u.json", R"({"gpus": [{"name": "X", "uuid": "GPU-1234", "pci_bus_id": "0000:01:00.0"}]})")});
  EXPECT_EQ(uuid.code, 2);
  EXPECT_NE(uuid.err.find("`GPU-1234` is not \"GPU-\" and 32 hex digits"), std::string::npos) << uuid.err;
  CliRun pci = gpumap_here({"list", "--simulate",
                       write_temp_file("p.json", R"({"gpus": [{"name": "X", "uuid": "GPU-aaaaaaaa-0000-0000-0000-000000000000"}]})")});
  EXPECT_EQ(pci.code, 2);
  EXPECT_NE(pci.err.find("gpus[0] needs \"pci_bus_id\""), std::string::npos) << pci.err;
}

TEST(CliSmall, NoGpuHostNeverAdvisesUnsettingAVariableThatIsNotSet) {
  std::string host = write_temp_file("none.json", R"({"gpus": []})");
  for (std::vector<std::string> args : {std::vector<std::string>{"pick"}, {"run", "--", "true"}, {"doctor"}, {"map"}}) {
    args.insert(args.begin() + 1, {"--simulate", host});
    CliRun r = gpumap_here(args);
    EXPECT_EQ(r.out.find("unset CUDA"), std::string::npos) << args[0] << ": " << r.out;
    EXPECT_EQ(r.err.find("unset CUDA"), std::string::npos) << args[0] << ": " << r.err;
  }
  CliRun set = gpumap_here({"pick", "--simulate", host}, {"CUDA_VISIBLE_DEVICES=0"});
  EXPECT_EQ(set.code, 6);
}

TEST(CliSmall, ProbeAndCheckTogetherAreRejected) {
  CliRun r = gpumap_here({"map", "--simulate", "h200x2", "--probe", "--check"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--probe and --check together"), std::string::npos) << r.err;
}


// Issue 56 item 13: a filter value that is not UTF-8 was "internal error" (exit 1, gpumap's own
// bug by the docs); it is the input's: exit 2 naming the option.
TEST(CliSmall, AFilterValueThatIsNotUtf8IsAUsageError) {
  for (std::vector<std::string> argv : {std::vector<std::string>{"ps", "--json", "--simulate", "h200x2", "--user", "\xff"},
                                        {"ps", "--simulate", "h200x2", "--job", "a\xc3"},
                                        {"fleet", "--json", "--prometheus", "http://127.0.0.1:9", "--node", "n\xe9"},
                                        {"top", "--once", "--simulate", "h200x2", "--filter", "\xff"}}) {
    CliRun r = gpumap_here(argv);
    EXPECT_EQ(r.code, 2) << argv[0] << ": " << r.err;
    EXPECT_NE(r.err.find("is not valid UTF-8"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  }
}

// Issue 53: pick, which and verify said nothing of a simulated host, so a GPUMAP_SIMULATE left
// exported silently chose the GPUs of a real launch.  Every command answering from one says so on
// stderr (those whose text starts with the host's banner say it there).
TEST(CliSmall, EveryCommandAnsweringFromASimulatedHostSaysSoOnStderr) {
  const std::vector<std::string> env = {"GPUMAP_SIMULATE=h200x2", "GPUMAP_LOCK_DIR=" + temp_dir("locks")};
  for (std::vector<std::string> argv : {std::vector<std::string>{"pick"}, {"pick", "--format", "env"}, {"which", "0"},
                                        {"verify", "--expect", "0,1"}, {"run", "--", "true"}}) {
    CliRun r = gpumap_here(argv, env);
    EXPECT_NE(r.err.find("SIMULATED host h200x2"), std::string::npos) << argv[0] << ": " << r.err;
    EXPECT_NE(r.err.find("GPUMAP_SIMULATE"), std::string::npos) << argv[0] << ": " << r.err;
    EXPECT_EQ(r.out.find("SIMULATED host h200x2"), std::string::npos) << "stdout is the answer: " << r.out;
  }
  // With --json the answer says it ("simulated": true), and nothing else is written around it:
  // run and bind write their JSON on stderr, and scripts read `2>&1` as one document.
  CliRun j = gpumap_here({"pick", "--json"}, env);
  EXPECT_EQ(j.err.find("SIMULATED host"), std::string::npos) << j.err;
  EXPECT_NE(j.out.find("\"simulated\": true"), std::string::npos) << j.out;
  CliRun flag = gpumap_here({"which", "--simulate", "h200x2", "0"});
  EXPECT_NE(flag.err.find("SIMULATED host h200x2 (--simulate)"), std::string::npos) << flag.err;
  // The banner's commands say it once, on stdout, as before.
  CliRun list = gpumap_here({"list"}, env);
  EXPECT_NE(list.out.find("SIMULATED"), std::string::npos);
  EXPECT_EQ(list.err, "");
}

}  // namespace
}  // namespace gpumap::testing
