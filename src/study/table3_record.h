#pragma once
// The records of a Table 3 study: what each finished run measured, small enough to keep in the
// repository (docs/table3/), so that no finished run is lost with the machine it ran on and the
// report can be built anywhere from the records alone. A record folder holds
//
//   RECORDS/plan.json                   the study's settings (table3_study.h): every record is of this plan
//   RECORDS/runs/<row>.seed<k>/record.json   the run's configuration, machine, pace, dev scores with
//                                            their signatures, the translations' SHA-256
//   RECORDS/runs/<row>.seed<k>/train.jsonl   its training log (learning curves, elapsed time)
//
// No weights: a study's records weigh a few hundred KB. A record folder is written whole or not at
// all (a temporary folder renamed into place), and a run with a valid record is finished: the study
// never trains it again.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "study/learning_curve.h"
#include "study/table3.h"
#include "study/table3_report.h"
#include "study/table3_study.h"

namespace attn::study {

// The machine a run finished on. `sitting` is the kernel's boot id: two runs of one sitting ran on
// the same machine as it was then (virtual machines of one CPU model train at different speeds).
struct MachineInfo {
  std::string cpu;  // /proc/cpuinfo's model name
  int cpu_family = 0, cpu_model = 0;
  int cores = 0;  // logical CPUs the process may use
  bool avx512_bf16 = false;
  std::string sitting;
};
MachineInfo this_machine();
std::string machine_text(const MachineInfo& m);  // "AMD EPYC (family 26, model 2), 2 cores"

// A run's pace relative to base's, measured on the same machine in the same sitting: a short
// training of each (the same batches), alternated, each pace the fastest of its rounds. Its unit does
// not depend on the machine, so runs that finished on different machines compare at equal time.
struct PaceMeasurement {
  double row_seconds_per_update = 0, base_seconds_per_update = 0;
  double relative = 0;  // row / base
  int rounds = 0;
};
// The pace of a short training's log: seconds per update from its first record to its last (the
// start-up before the first record left out). Throws Error naming the file when it has fewer than
// two records.
double log_seconds_per_update(const std::filesystem::path& train_jsonl);
// Reads DIR/base.<k>/train.jsonl and DIR/row.<k>/train.jsonl, k = 1, 2, ... (scripts/table3 writes
// them). Throws Error naming DIR when a round is missing either side.
PaceMeasurement read_pace_measurement(const std::filesystem::path& dir);

struct Table3Record {
  std::string name, row;  // "A1.seed1", "A1"
  int seed = 1;
  std::int64_t updates = 0;
  nlohmann::json plan;    // the study's settings (table3_settings_json)
  nlohmann::json config;  // the run's effective configuration (its train/config.json)
  MachineInfo machine;
  std::string precision;  // of the matrix products: the plan fixes it
  double training_seconds = 0, seconds_per_update = 0, tokens_per_second = 0;  // as measured there
  std::optional<PaceMeasurement> pace;  // none for base (1 by definition) or when not measured
  double dev_cross_entropy = 0, dev_ppl = 0;
  double bleu = 0, chrf = 0;
  nlohmann::json scores;  // attn bleu --json: BLEU and chrF2 with their signatures
  int translated_verses = 0;
  std::string translations_sha256;
  std::string finished;                        // UTC, ISO 8601
  std::vector<CurvePoint> elapsed, dev_curve;  // from its train.jsonl
};

// The record of a run that scripts/table3's sweep finished in STUDY/runs/<row>.seed<k>/ (throws Error
// naming the file at fault, or when the run has not finished).
Table3Record make_table3_record(const std::filesystem::path& study, const Table3Settings& settings,
                                const std::string& name, const std::optional<PaceMeasurement>& pace,
                                const MachineInfo& machine, const std::string& finished);
// Writes RECORDS/runs/<name>/ whole (record.json and a copy of the run's train.jsonl), replacing a
// damaged record of the same run.
void write_table3_record(const std::filesystem::path& records, const Table3Record& record,
                         const std::filesystem::path& train_jsonl);
// Reads one record folder; throws Error naming the file and the problem: a missing or torn file, a
// missing key, a record of another plan (`plan`), a name that is not its folder's, a log that does
// not reach the recorded update.
Table3Record read_table3_record(const std::filesystem::path& folder, const nlohmann::json& plan);

// RECORDS/plan.json: written with the study's settings the first time, and afterwards the settings
// must be the same (throws Error naming the file and both settings otherwise).
void check_records_plan(const std::filesystem::path& records, const Table3Settings& settings);

// Every record of the plan's runs. A damaged record or one of another plan is not counted as
// finished: `problems` holds a line naming its file and what is wrong.
struct Table3RecordScan {
  std::map<std::string, Table3Record> records;  // by sweep name, valid records only
  std::vector<std::string> problems;
};
Table3RecordScan scan_table3_records(const std::filesystem::path& records, const Table3Settings& settings);

// What the report reads of a record. Its pace for equal-time readings is relative to base's (base 1).
RunResult run_result(const Table3Record& record);

// RECORDS/report.md and its charts from RECORDS/plan.json and the records alone; problems with
// records are listed in the report and returned. `setup`: Markdown placed after the title.
struct Table3RecordReport {
  std::size_t finished = 0, planned = 0, charts = 0;
  std::vector<std::string> problems;
};
Table3RecordReport write_table3_records_report(const std::filesystem::path& records, const std::string& setup);

// Where a study stands: its runs with records, the run under way in STUDY (its update, from its
// training log), and an estimate of the hours of an idle machine left, from the paces recorded in
// this sitting (or the current run's) and each remaining run's cost relative to base.
std::string table3_status(const std::filesystem::path& study, const std::filesystem::path& records);

// A run's cost per update relative to base's, estimated from its multiply-adds per target token
// (the layers' products and attention at the batches' mean length, the output layer): for the
// estimate of the hours left, never for a result.
double estimated_relative_cost(const ModelConfig& run, const ModelConfig& base);

}  // namespace attn::study
