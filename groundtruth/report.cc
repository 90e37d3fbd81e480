#include "groundtruth/report.h"

#include <algorithm>

#include "groundtruth/embedded_files.h"

namespace fbkit::groundtruth {
namespace {

constexpr int kPanelW = 300, kPanelH = 225, kPlotTop = 52, kPlotH = 130, kPlotLeft = 40;
constexpr const char* kRecallColor = "#3465a4";
constexpr const char* kOverColor = "#e08a2c";

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Num(int v) { return std::to_string(v); }

// One bar of height value (0-1) at x; missing values get a dash on the axis.
std::string BarSvg(const GroupScore& g, const std::string& metric, const char* color, int x,
                   int w) {
  auto v = g.metrics.at(metric).value();
  int base = kPlotTop + kPlotH;
  std::string label = MetricCell(g, metric);
  if (!v) {
    return "<text x=\"" + Num(x + w / 2) + "\" y=\"" + Num(base - 4) +
           "\" text-anchor=\"middle\" class=\"v\">-</text>";
  }
  int h = static_cast<int>(*v * kPlotH + 0.5);
  return "<rect x=\"" + Num(x) + "\" y=\"" + Num(base - h) + "\" width=\"" + Num(w) +
         "\" height=\"" + Num(h) + "\" fill=\"" + color + "\" data-metric=\"" + metric +
         "\" data-value=\"" + MetricNumber(*v) + "\"><title>" + metric + " " + label +
         "%</title></rect><text x=\"" + Num(x + w / 2) + "\" y=\"" + Num(base - h - 3) +
         "\" text-anchor=\"middle\" class=\"v\">" + label + "</text>";
}

// The waterfall line through the recall bars' tops (only between defined values).
std::string WaterfallLine(const GroupScore& g, const std::vector<int>& centers) {
  const char* recalls[] = {"recall_files", "recall_tasks", "recall_steps"};
  std::string out, points;
  for (size_t i = 0; i < 3; ++i) {
    auto v = g.metrics.at(recalls[i]).value();
    if (!v) {
      if (points.find(' ') != std::string::npos) out += "<polyline points=\"" + points + "\"/>";
      points.clear();
      continue;
    }
    int y = kPlotTop + kPlotH - static_cast<int>(*v * kPlotH + 0.5);
    points += (points.empty() ? "" : " ") + Num(centers[i]) + "," + Num(y);
  }
  if (points.find(' ') != std::string::npos) out += "<polyline points=\"" + points + "\"/>";
  return out.empty() ? "" : "<g class=\"wf\">" + out + "</g>";
}

std::string Panel(const AgentScore& a, const GroupScore& g, int ox, int oy) {
  std::string s = "<g transform=\"translate(" + Num(ox) + "," + Num(oy) + ")\" data-agent=\"" +
                  Escape(a.agent) + "\" data-group=\"" + Escape(g.name) + "\">";
  s += "<text x=\"" + Num(kPanelW / 2) + "\" y=\"16\" text-anchor=\"middle\" class=\"t\">" +
       Escape(a.agent) + "</text>";
  s += "<text x=\"" + Num(kPanelW / 2) + "\" y=\"31\" text-anchor=\"middle\" class=\"s\">" +
       Escape(g.name) + " (n=" + std::to_string(g.instances) + ")</text>";
  int base = kPlotTop + kPlotH, right = kPanelW - 10;
  for (int pct : {0, 50, 100}) {
    int y = base - pct * kPlotH / 100;
    s += "<line x1=\"" + Num(kPlotLeft) + "\" y1=\"" + Num(y) + "\" x2=\"" + Num(right) +
         "\" y2=\"" + Num(y) + "\" class=\"grid\"/><text x=\"" + Num(kPlotLeft - 4) + "\" y=\"" +
         Num(y + 4) + "\" text-anchor=\"end\" class=\"a\">" + Num(pct) + "%</text>";
  }
  const char* levels[][3] = {{"Files", "recall_files", "overpred_files"},
                             {"Tasks", "recall_tasks", "overpred_tasks"},
                             {"Steps", "recall_steps", "overpred_steps"}};
  int slot = (right - kPlotLeft) / 3, w = slot / 3;
  std::vector<int> centers;
  for (int i = 0; i < 3; ++i) {
    int x = kPlotLeft + i * slot + slot / 6;
    centers.push_back(x + w / 2);
    s += BarSvg(g, levels[i][1], kRecallColor, x, w);
    s += BarSvg(g, levels[i][2], kOverColor, x + w, w);
    s += "<text x=\"" + Num(x + w) + "\" y=\"" + Num(base + 16) +
         "\" text-anchor=\"middle\" class=\"a\">" + levels[i][0] + "</text>";
  }
  return s + WaterfallLine(g, centers) + "</g>";
}

std::string Legend(int y) {
  return "<g transform=\"translate(10," + Num(y) + ")\"><rect width=\"12\" height=\"12\" fill=\"" +
         kRecallColor +
         "\"/><text x=\"18\" y=\"10\" class=\"a\">Recall</text><rect x=\"80\" "
         "width=\"12\" height=\"12\" fill=\"" +
         kOverColor +
         "\"/><text x=\"98\" y=\"10\" "
         "class=\"a\">OverPrediction</text></g>";
}

std::string TableHtml(const std::vector<AgentScore>& agents) {
  std::string s =
      "<table id=\"table3\"><thead><tr><th rowspan=\"2\">Agent</th><th rowspan=\"2\">Group</th>"
      "<th rowspan=\"2\">n</th><th colspan=\"2\">Localization</th><th colspan=\"2\">"
      "Implementation</th><th colspan=\"2\">Reasoning</th><th colspan=\"3\">Issue "
      "understanding</th><th colspan=\"2\">Outcome</th></tr><tr>";
  for (const auto& h : MetricHeaders()) s += "<th>" + Escape(h) + "</th>";
  s += "</tr></thead><tbody>";
  for (size_t ai = 0; ai < agents.size(); ++ai) {
    const auto& a = agents[ai];
    for (size_t gi = 0; gi < a.groups.size(); ++gi) {
      const auto& g = a.groups[gi];
      s += "<tr data-agent-index=\"" + std::to_string(ai) + "\" data-group-index=\"" +
           std::to_string(gi) + "\"><td>" + Escape(a.agent) + "</td><td>" + Escape(g.name) +
           "</td><td>" + std::to_string(g.instances) + "</td>";
      for (const auto& m : MetricNames()) {
        auto v = g.metrics.at(m).value();
        s += "<td data-metric=\"" + m + "\" data-value=\"" + (v ? MetricNumber(*v) : "") + "\">" +
             MetricCell(g, m) + "</td>";
      }
      s += "</tr>";
    }
  }
  return s + "</tbody></table>";
}

// The page's script and style are groundtruth/embedded/report.js and report.css, embedded at
// build time. The script checks every cell against the embedded fbkit.race-scores/1 data;
// the verdict goes to <body data-check>. Written for old engines too (no modules, no arrow
// functions needed).

}  // namespace

std::string ScoresSvg(const std::vector<AgentScore>& agents) {
  size_t cols = 1;
  for (const auto& a : agents) cols = std::max(cols, a.groups.size());
  int width = static_cast<int>(cols) * kPanelW + 20;
  int height = static_cast<int>(agents.size()) * kPanelH + 40;
  std::string s = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + Num(width) +
                  "\" height=\"" + Num(height) + "\" viewBox=\"0 0 " + Num(width) + " " +
                  Num(height) + "\" font-family=\"sans-serif\">";
  s += "<style>.t{font-size:13px;font-weight:bold}.s{font-size:11px;fill:#444}.a{font-size:10px;"
       "fill:#444}.v{font-size:9px;fill:#222}.grid{stroke:#ddd}.wf polyline{fill:none;"
       "stroke:#1a3d6d;stroke-width:1.5;stroke-dasharray:4 2}</style>";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>";
  for (size_t ai = 0; ai < agents.size(); ++ai) {
    for (size_t gi = 0; gi < agents[ai].groups.size(); ++gi) {
      s += Panel(agents[ai], agents[ai].groups[gi], 10 + static_cast<int>(gi) * kPanelW,
                 static_cast<int>(ai) * kPanelH);
    }
  }
  s += Legend(height - 24);
  return s + "</svg>\n";
}

std::string ScoresHtml(const std::vector<AgentScore>& agents) {
  std::string json = ScoresJson(agents, false);
  std::string safe;  // "</" must not close the data <script>
  for (size_t i = 0; i < json.size(); ++i) {
    safe += json[i];
    if (json[i] == '<' && i + 1 < json.size() && json[i + 1] == '/') safe += "\\";
  }
  std::string s =
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>RACE "
      "scores</title><style>" +
      std::string(util::FindEmbedded(ReportFiles(), "report.css")) + "</style></head><body>";
  s += "<h1>RACE scores</h1><p class=\"note\">Recall falls from files to tasks to steps; "
       "OverPrediction is the share of predicted files, tasks or steps the ground truth does not "
       "have. Ratios are means over the instances where they are defined (n per cell in its "
       "tooltip); Goal is 0-10.</p>";
  s += ScoresSvg(agents);
  s += TableHtml(agents);
  s += "<script type=\"application/json\" id=\"scores\">" + safe + "</script>";
  s += "<script>" + std::string(util::FindEmbedded(ReportFiles(), "report.js")) + "</script></body></html>\n";
  return s;
}

}  // namespace fbkit::groundtruth
