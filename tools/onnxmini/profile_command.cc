// onnxmini profile summary TRACE [--by op|node|shape|variant] [--skip-runs N] [--top N] [--format F]
//                              [--peak-gflops G] [--peak-gbs B]
// onnxmini profile compare BASE OTHER [--by op|node|shape] [--skip-runs N] [--format F]
// Both read onnxmini's and onnxruntime's traces (fence or kernel-only layout).
#include <iostream>

#include "onnxmini/profile.h"
#include "tools/onnxmini/commands.h"

namespace onnxmini_cli {
namespace {

using namespace onnxmini::profile;

struct ProfileArgs {
  std::string trace, base, other;
  std::string by_summary = "op", by_compare = "shape";
  std::string format_summary = "text", format_compare = "text";
  int skip_summary = 0, skip_compare = 0, top = 0;
  double peak_gflops = 0, peak_gbs = 0;
};

CommandRegistrar reg("profile", [](CLI::App& app) -> std::function<int()> {
  auto a = std::make_shared<ProfileArgs>();
  CLI::App* sub = app.add_subcommand("profile", "Analyse profile traces (onnxmini or onnxruntime)");
  sub->require_subcommand(1);
  CLI::App* sum = sub->add_subcommand("summary", "Time per op type, node or (op, shapes)");
  sum->add_option("trace", a->trace, "trace file (.json)")->required();
  sum->add_option("--by", a->by_summary,
                  "op (default), node, shape, or variant: (op, kernel_variant, isa) with GFLOP/s, GB/s and the roofline");
  sum->add_option("--peak-gflops", a->peak_gflops, "--by variant: the compute roof (default: measured here)");
  sum->add_option("--peak-gbs", a->peak_gbs, "--by variant: the memory roof in GB/s (default: measured here)");
  sum->add_option("--skip-runs", a->skip_summary, "leading runs to leave out (warm-up)");
  sum->add_option("--top", a->top, "rows to show (default all)");
  sum->add_option("--format", a->format_summary, "text (default), csv, json or markdown");
  CLI::App* cmp = sub->add_subcommand("compare", "Two traces side by side (the seeds' profile merge)");
  cmp->add_option("base", a->base, "base trace")->required();
  cmp->add_option("other", a->other, "other trace")->required();
  cmp->add_option("--by", a->by_compare, "shape (default: op + shapes + occurrence), node or op");
  cmp->add_option("--skip-runs", a->skip_compare, "leading runs to leave out of both traces");
  cmp->add_option("--format", a->format_compare, "text (default), csv, json or markdown");
  return [a, sum, cmp]() {
    if (sum->parsed()) {
      SummaryOptions o;
      o.by = group_by_from_string(a->by_summary);
      o.skip_runs = a->skip_summary;
      o.top = a->top;
      o.peak_gflops = a->peak_gflops;
      o.peak_gbs = a->peak_gbs;
      const Format f = format_from_string(a->format_summary);
      const Summary s = summarize(read_trace(a->trace), o);
      std::cout << summary_table(s).render(f, summary_title(s));
      return 0;
    }
    if (cmp->parsed()) {
      CompareOptions o;
      o.by = group_by_from_string(a->by_compare);
      o.skip_runs = a->skip_compare;
      const Format f = format_from_string(a->format_compare);
      const Comparison c = compare(read_trace(a->base), read_trace(a->other), o);
      std::cout << comparison_table(c).render(f, comparison_title(c));
      return 0;
    }
    return 2;
  };
});

}  // namespace
}  // namespace onnxmini_cli
