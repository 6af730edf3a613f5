//===- Report.h - Render causal profiles: text, JSON, HTML, diff ----------===//
//
// Output side of `causal report` and `causal diff`. Everything here renders
// an Analysis (tools/profile/Analysis.h) computed once; the text, JSON and
// HTML views show the same numbers.
//
//===----------------------------------------------------------------------===//
#ifndef CAUSAL_REPORT_REPORT_H
#define CAUSAL_REPORT_REPORT_H

#include "Analysis.h"
#include "PathTree.h"
#include "PathsReader.h"
#include "ProfileReader.h"
#include "WaitEffects.h"
#include "WaitGraph.h"
#include "WaitsReader.h"

#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace causal::report {

using profile::Analysis;
using profile::AnalysisOptions;
using profile::Profile;

/// What the report says about its own inputs (shown in every view).
struct ReportContext {
  std::vector<std::string> inputs; // profile paths as given
  AnalysisOptions options;
  /// The HTML page's waits section: the analysis of the profile's sidecar,
  /// or why there is none (no section when both are empty).
  const profile::WaitAnalysis *waits = nullptr;
  std::string waitsProblem;
  /// The page's call-paths section: the trees of the profile's paths
  /// sidecar (with the file, for its runs), or why it could not be read
  /// (no section when all are empty: no sidecar).
  const profile::PathsAnalysis *paths = nullptr;
  const profile::PathsFile *pathsFile = nullptr;
  std::string pathsProblem;
};

struct TextOptions {
  size_t top = 10;            // lines shown; 0 = all
  bool color = false;         // ANSI colours (only when writing to a terminal)
  bool ascii = false;         // curves with ASCII characters instead of blocks
  size_t notEnoughShown = 10; // "not enough data" entries listed
};

void renderText(std::ostream &out, const Analysis &analysis, const ReportContext &context,
                const TextOptions &options);
void renderJson(std::ostream &out, const Analysis &analysis, const ReportContext &context);
/// The analysis as one JSON object (what --json prints and the HTML embeds).
void writeAnalysisJson(std::ostream &out, const Analysis &analysis, const ReportContext &context);
/// The A/B confirmations of \p analysis as a table (`causal confirm`'s
/// output; `causal report` shows the same after its ranking).
void renderConfirmationsText(std::ostream &out, const Analysis &analysis,
                             const std::string &profilePath);
/// Environment variables and their values, as a run is given them.
using Settings = std::vector<std::pair<std::string, std::string>>;
/// What makes the runtime select \p line in every experiment (`causal
/// confirm`): CAUSAL_FIXED_LINE=FILE:LINE for a CPU line,
/// CAUSAL_FIXED_WAIT=FILE:LINE@KIND for a wait target, and for a line in one
/// calling context, FILE:LINE (via CALLER), CAUSAL_FIXED_LINE=FILE:LINE and
/// \p pathVariable (the variable of `causal run --path`) = CALLER. False,
/// with \p problem saying why, for a name that is none of these, or a
/// per-caller line without \p pathVariable (null or "").
bool fixedTargetSettings(const std::string &line, const char *pathVariable, Settings &settings,
                         std::string &problem);
/// The same with the variable of this build's `causal run --path`.
bool fixedTargetSettings(const std::string &line, Settings &settings, std::string &problem);
/// The variable of the settings row whose `causal run` option is --path
/// (causal/settings.def), or null when there is none.
const char *pathSettingVariable();
/// One self-contained HTML page: no network, no external scripts or styles.
void renderHtml(std::ostream &out, const Analysis &analysis, const ReportContext &context);

/// The ordinary profile: the \p top hottest lines by samples (0 = all), with
/// their share of all samples.
void renderSamplesText(std::ostream &out, const std::vector<profile::LineSamples> &lines,
                       const ReportContext &context, size_t top);
void renderSamplesJson(std::ostream &out, const std::vector<profile::LineSamples> &lines,
                       const ReportContext &context);

/// The curve as a row of characters, one per 5 % step of line speedup
/// (0 %..100 %, 21 characters), scaled to [low, high]; ' ' where no
/// experiment measured that speedup.
std::string sparkline(const std::vector<profile::CurvePoint> &curve, double low, double high,
                      bool ascii);

// ---- causal diff -----------------------------------------------------------

enum class ChangeKind { Gained, Lost, Unchanged, New, Gone };
const char *changeKindName(ChangeKind kind);

struct LineChange {
  std::string line, point;
  ChangeKind kind = ChangeKind::Unchanged;
  const profile::PointResult *before = nullptr; // null when absent
  const profile::PointResult *after = nullptr;
  double slopeChange = 0;     // after - before (0 when one side is absent)
  double maxImpactChange = 0; // after - before
};

/// Pairs the curves of two analyses by (line, point). A change counts as
/// gained/lost when the two slope intervals do not overlap (or, without
/// intervals, when the slopes differ at all). Sorted by |slope change|.
std::vector<LineChange> compareAnalyses(const Analysis &before, const Analysis &after);

struct DiffTextOptions {
  size_t top = 20;
  bool all = false; // also list unchanged lines
  bool color = false;
};
void renderDiffText(std::ostream &out, const std::vector<LineChange> &changes,
                    const Analysis &before, const Analysis &after,
                    const std::vector<std::string> &inputs, const DiffTextOptions &options);
void renderDiffJson(std::ostream &out, const std::vector<LineChange> &changes,
                    const Analysis &before, const Analysis &after,
                    const std::vector<std::string> &inputs);

// ---- causal waits (Waits.cpp) ---------------------------------------------

struct WaitsContext {
  std::string sidecar; // the file read
  bool mergeRoles = false;
  std::vector<std::string> warnings; // the reader's and the profile check's
  /// The analysis of the causal profile beside the sidecar, when there is
  /// one: edges to pseudo-threads then show what its experiments measured
  /// for their wait targets (profile::waitEdgeEffects). Null: no effects.
  const profile::Analysis *causal = nullptr;
};

struct WaitsTextOptions {
  size_t top = 20; // edges listed outside knots; 0 = all
};

/// Knots ranked by weight with their edges and lines, the other edges, the
/// threads (times, unexplained share).
void renderWaitsText(std::ostream &out, const profile::WaitAnalysis &analysis,
                     const WaitsContext &context, const WaitsTextOptions &options);
/// The same as one JSON object (--json).
void writeWaitsJson(std::ostream &out, const profile::WaitAnalysis &analysis,
                    const WaitsContext &context);
void renderWaitsJson(std::ostream &out, const profile::WaitAnalysis &analysis,
                     const WaitsContext &context);
/// Graphviz (--dot): knots as clusters, pseudo-threads dashed ellipses.
void renderWaitsDot(std::ostream &out, const profile::WaitAnalysis &analysis,
                    const WaitsContext &context);
/// Every recorded episode and thread as read, JSON (--episodes).
void renderEpisodesJson(std::ostream &out, const profile::WaitsFile &waits);
/// The HTML page's waits section: the graph laid out as inline SVG
/// (svg#waits-graph, one g.wait-vertex per vertex, one g.wait-edge per drawn
/// edge: the 40 heaviest), the knots and the edges as tables (with the
/// causal effect of an edge's wait targets when \p causal has them); or
/// \p problem.
std::string waitsHtmlSection(const profile::WaitAnalysis &analysis, const std::string &problem,
                             const profile::Analysis *causal = nullptr);

// ---- causal paths (Paths.cpp) ---------------------------------------------

struct PathsViewOptions {
  bool topDown = false;       // the top-down tree instead of the callers tree
  profile::TreeLimits limits; // --depth, --min-share
  bool withLocation = true;   // folded frames with " (FILE:LINE)"
};

/// Per chosen function: its totals, then its callers tree (or top-down
/// tree), indented, with calls, share of calls, CPU, wall, blocked time and
/// samples per node (and the share of the analysis' metric when it is not
/// calls). \p file gives the runs' descriptions. docs/paths.md.
void renderPathsText(std::ostream &out, const profile::PathsAnalysis &analysis,
                     const profile::PathsFile &file, const PathsViewOptions &options);
/// The same as one JSON object (schema "version": 1, docs/paths.md).
void renderPathsJson(std::ostream &out, const profile::PathsAnalysis &analysis,
                     const profile::PathsFile &file, const PathsViewOptions &options);
/// Folded lines of every function of \p analysis, its metric as the value
/// (profile::foldedLines): the input of flamegraph.pl, inferno, speedscope.
void renderPathsFolded(std::ostream &out, const profile::PathsAnalysis &analysis,
                       const PathsViewOptions &options);
/// The HTML page's call-paths section (h2#paths): per function
/// (div.paths-function) its totals and both trees as nested
/// <details> elements (collapsible, no script), or \p problem.
std::string pathsHtmlSection(const profile::PathsAnalysis *analysis, const profile::PathsFile *file,
                             const std::string &problem);

// ---- helpers shared by the renderers ---------------------------------------

/// JSON string contents: quotes, backslashes, control characters and
/// '<', '>', '&' escaped (safe inside an HTML <script> element).
std::string jsonEscape(std::string_view text);
/// HTML (or SVG) text and attribute values: '<', '>', '&' and '"' escaped
/// (defined in Html.cpp).
std::string xmlEscape(const std::string &text);
/// A JSON number; NaN and infinities become null.
std::string jsonNumber(double value);
/// "+12.3%" style.
std::string percent(double fraction, int decimals = 1);

} // namespace causal::report

#endif
