// libFuzzer target: the files a study is planned from and goes on with: a sweep file
// (`attn sweep plan SWEEP.json`, study/sweep.h; docs/sweep.md) and a Table 3 study's plan.json
// (`attn table3 plan|report`, study/table3_study.h). Input: the sweep file, byte 0xFF, the plan.json
// (fuzz_support.h).
//
// Checked besides memory errors: an accepted sweep has runs with distinct names, each with one
// budget (updates or minutes), and at least one decoding to score
// with; planned into a folder and read back, it gives the same runs with the same options; an
// accepted plan.json written back and read again gives the same settings.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>

#include "core/error.h"
#include "fuzz_support.h"
#include "study/sweep.h"
#include "study/table3_study.h"

namespace {

void check_sweep(const std::string& path) {
  const attn::study::SweepPlan plan = attn::study::read_sweep_file(path);
  FUZZ_CHECK(!plan.runs.empty(), "a sweep of no runs was accepted");
  FUZZ_CHECK(!plan.scoring.decodings.empty(), "a sweep with nothing to score with");
  std::set<std::string> names;
  for (const auto& run : plan.runs) {
    FUZZ_CHECK(names.insert(run.name).second, "two runs named " + run.name);
    FUZZ_CHECK((run.budget.updates > 0) != (run.budget.minutes > 0), run.name + " has not exactly one budget");
  }
  const std::filesystem::path folder = attn::fuzz::scratch_dir() / "sweep";
  std::filesystem::remove_all(folder);
  attn::study::write_sweep_plan(plan, folder);
  const attn::study::SweepPlan again = attn::study::read_planned_sweep(folder);
  FUZZ_CHECK(again.runs.size() == plan.runs.size(), "the planned sweep has another number of runs");
  for (std::size_t i = 0; i < plan.runs.size(); ++i)
    FUZZ_CHECK(again.runs[i].name == plan.runs[i].name && again.runs[i].options == plan.runs[i].options,
               "run " + plan.runs[i].name + " reads back otherwise from its folder");
}

void check_table3_plan(const std::string& path) {
  const attn::study::Table3Settings settings = attn::study::read_table3_settings(path);
  const nlohmann::json written = attn::study::table3_settings_json(settings);
  const std::string again = attn::fuzz::write_scratch_file("plan-again.json", written.dump());
  FUZZ_CHECK(attn::study::table3_settings_json(attn::study::read_table3_settings(again)) == written,
             "plan.json does not read back as written: " + written.dump());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto parts = attn::fuzz::split_parts({reinterpret_cast<const char*>(data), size});
  try {
    check_sweep(attn::fuzz::write_scratch_file("sweep.json", parts[0]));
  } catch (const attn::Error&) {
  }
  try {
    check_table3_plan(attn::fuzz::write_scratch_file("plan.json", parts.size() > 1 ? parts[1] : ""));
  } catch (const attn::Error&) {
  }
  return 0;
}
