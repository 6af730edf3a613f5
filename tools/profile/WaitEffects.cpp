//===- WaitEffects.cpp - The causal profile's word on a wait-for edge -----===//
#include "WaitEffects.h"

#include <cmath>

namespace causal::profile {

WaitTargetKind waitTargetKindOf(WaitVertexKind kind) {
  switch (kind) {
  case WaitVertexKind::Thread:
    return WaitTargetKind::None;
  case WaitVertexKind::Timer:
    return WaitTargetKind::Timer;
  case WaitVertexKind::Disk:
    return WaitTargetKind::Disk;
  case WaitVertexKind::Network:
    return WaitTargetKind::Network;
  case WaitVertexKind::Unknown:
    return WaitTargetKind::Other;
  }
  return WaitTargetKind::None;
}

std::vector<WaitTargetEffect> waitEdgeEffects(const WaitAnalysis &waits, const WaitEdge &edge,
                                              const Analysis &analysis) {
  std::vector<WaitTargetEffect> effects;
  if (edge.to >= waits.vertices.size())
    return effects;
  WaitTargetKind kind = waitTargetKindOf(waits.vertices[edge.to].kind);
  if (kind == WaitTargetKind::None)
    return effects;
  for (const LineWeight &weight : edge.waitLines) {
    if (weight.line.empty())
      continue;
    WaitTargetEffect effect;
    effect.line = weight.line;
    effect.target = waitTargetName(weight.line, kind);
    for (size_t i = 0; i < analysis.lines.size() && !effect.ranked; ++i)
      if (analysis.lines[i].line == effect.target) {
        effect.rank = i + 1;
        effect.ranked = &analysis.lines[i];
      }
    if (effect.ranked) {
      for (const PointResult &point : effect.ranked->points)
        if (!effect.point || point.slope > effect.point->slope)
          effect.point = &point;
      if (effect.point)
        for (const CurvePoint &c : effect.point->curve)
          if (std::fabs(c.speedup - 0.5) < 0.005)
            effect.atHalf = &c;
    } else {
      for (const NotEnoughData &entry : analysis.notEnoughData)
        if (entry.line == effect.target) {
          effect.notEnough = &entry;
          break;
        }
    }
    effect.confirmation = findConfirmation(analysis, effect.target);
    if (effect.ranked || effect.notEnough || effect.confirmation)
      effects.push_back(std::move(effect));
  }
  return effects;
}

} // namespace causal::profile
