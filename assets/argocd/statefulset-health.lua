-- Argo CD resource health for apps/StatefulSet that knows ststui's rollout plans and freezes.
--
-- Install: the key `resource.customizations.health.apps_StatefulSet` of the argocd-cm
-- ConfigMap holds this script (assets/argocd/argocd-cm.yaml shows it in place).
--
--   Progressing  a plan runs or bakes; the set waits in a rollout group's plan; the spec is
--                not observed yet; pods are starting or being replaced
--   Suspended    a plan waits at its manual gate (`ststui approve`); the set is frozen
--                (`ststui freeze`); a partition or OnDelete holds pods on the old revision
--                with nothing rolling them
--   Degraded     a plan halted on the revision the set rolls out (`ststui rollout
--                --continue` or `ststui abort`); a plan record that cannot be read
--   Healthy      every replica Ready and on the update revision, and no plan under way
--
-- Argo CD's built-in check calls an OnDelete set Healthy before any pod rolls
-- (argoproj/gitops-engine#136); this one does not. Argo CD runs Lua 5.1 (gopher-lua) with no
-- JSON library: the plan record (compact JSON written by ststui) is read with patterns.

local hs = { status = "Progressing", message = "" }

local meta = obj.metadata or {}
local ann = meta.annotations or {}
local spec = obj.spec or {}
local status = obj.status or {}

local replicas = spec.replicas or 1
local strategy = spec.updateStrategy or {}
local onDelete = strategy.type == "OnDelete"
local partition = 0
if not onDelete and strategy.rollingUpdate ~= nil and strategy.rollingUpdate.partition ~= nil then
  partition = strategy.rollingUpdate.partition
end
local updateRevision = status.updateRevision or ""
local currentRevision = status.currentRevision or ""
local ready = status.readyReplicas or 0
local updated = status.updatedReplicas or 0
local observed = (status.observedGeneration or 0) >= (meta.generation or 0)

local function field(json, name)
  return string.match(json, '"' .. name .. '"%s*:%s*"([^"]*)"')
end

local function number(json, name)
  return tonumber(string.match(json, '"' .. name .. '"%s*:%s*(%d+)'))
end

-- The plan recorded on the set, when it rolls out the revision the set rolls out now.
local plan = ann["ststui.io/plan"]
if plan ~= nil then
  local phase = field(plan, "phase")
  local step = number(plan, "step")
  local of = number(plan, "of")
  local revision = field(plan, "revision")
  if phase == nil or step == nil or of == nil or revision == nil then
    hs.status = "Degraded"
    hs.message = "the ststui plan record (ststui.io/plan) cannot be read"
    return hs
  end
  local at = "plan " .. step .. "/" .. of
  if revision == updateRevision or not observed then
    if phase == "halted" then
      hs.status = "Degraded"
      hs.message = at .. " halted: " .. (field(plan, "reason") or "no reason recorded")
      return hs
    elseif phase == "gate" then
      hs.status = "Suspended"
      hs.message = at .. " waits for approval (ststui approve " .. (meta.name or "") .. ")"
      return hs
    elseif phase == "waiting" or phase == "baking" or phase == "checking" or phase == "approved" then
      hs.status = "Progressing"
      hs.message = at .. ": " .. phase
      return hs
    end
  end
end

-- A set its rollout group's plan has waiting (ststui.io/group), while an update waits on it.
local part = ann["ststui.io/group"]
if part ~= nil and field(part, "state") == "waiting" then
  local pending = currentRevision ~= updateRevision or updated < replicas or ready < replicas
  if pending then
    local place = number(part, "place")
    local group = field(part, "group") or "?"
    hs.status = "Progressing"
    hs.message = "waits in rollout group " .. group .. "'s plan (" .. ((place or 0) + 1) .. ")"
    return hs
  end
end

-- A freeze that still holds (the partition at the replicas).
if ann["ststui.io/frozen-partition"] ~= nil and not onDelete and partition >= replicas then
  hs.status = "Suspended"
  hs.message = "frozen by " .. (ann["ststui.io/frozen-by"] or "someone") .. " (ststui resume)"
  return hs
end

if not observed then
  hs.message = "waiting for the controller to observe generation " .. (meta.generation or 0)
  return hs
end
if ready < replicas then
  hs.message = ready .. " of " .. replicas .. " Ready"
  return hs
end
if onDelete then
  if currentRevision ~= updateRevision or updated < replicas then
    hs.status = "Suspended"
    hs.message = "OnDelete: " .. updated .. " of " .. replicas ..
      " pods on the update revision; the rest update when deleted"
    return hs
  end
else
  local wanted = replicas - math.min(partition, replicas)
  if updated < wanted then
    hs.message = updated .. " of " .. wanted .. " pods updated"
    return hs
  end
  if currentRevision ~= updateRevision or updated < replicas then
    hs.status = "Suspended"
    hs.message = "partition " .. partition .. " holds " .. (replicas - updated) ..
      " pods on the old revision"
    return hs
  end
end

hs.status = "Healthy"
hs.message = replicas .. " of " .. replicas .. " Ready on " .. updateRevision
return hs
