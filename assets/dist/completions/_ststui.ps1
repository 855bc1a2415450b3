
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'ststui' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'ststui'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'ststui' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Kubeconfig file (real-cluster mode and the verbs)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'Kubeconfig context (real-cluster mode and the verbs)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--log-file', '--log-file', [CompletionResultType]::ParameterName, 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)')
            [CompletionResult]::new('--feature-gates', '--feature-gates', [CompletionResultType]::ParameterName, 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults')
            [CompletionResult]::new('--contexts', '--contexts', [CompletionResultType]::ParameterName, 'A fleet''s view: NAME (or the sets -l selects) in each of these kubeconfig contexts, side by side as one matrix, read-only (`ststui rollout … --contexts` rolls a fleet)')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'With --contexts: the sets this label selector lists in each cluster (a group in each), e.g. -l rollout-group=ingester')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'With --contexts: the sets this label selector lists in each cluster (a group in each), e.g. -l rollout-group=ingester')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Every namespace''s StatefulSets in the list (real-cluster mode)')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Every namespace''s StatefulSets in the list (real-cluster mode)')
            [CompletionResult]::new('--read-only', '--read-only', [CompletionResultType]::ParameterName, 'Make no writes to the cluster at all (real-cluster mode): watch and explain only')
            [CompletionResult]::new('--drive', '--drive', [CompletionResultType]::ParameterName, 'Be the StatefulSet controller: ststui''s core reconciles the namespace''s sets (or NAME only), with pause and step. Only where kube-controller-manager runs without its StatefulSet controller (--controllers=*,-statefulset-controller); refused, or stopped at once, when another controller is seen at work')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('sim', 'sim', [CompletionResultType]::ParameterValue, 'Run against the embedded simulated cluster (no Kubernetes needed)')
            [CompletionResult]::new('explain', 'explain', [CompletionResultType]::ParameterValue, 'Print what the console shows about a set: grid, revisions, health, the controller''s next action and blocker, and kubectl''s verdict beside ours')
            [CompletionResult]::new('step', 'step', [CompletionResultType]::ParameterValue, 'Lower the partition by one (or to N): the next ordinals of a canary roll out')
            [CompletionResult]::new('freeze', 'freeze', [CompletionResultType]::ParameterValue, 'Hold the rollout: partition to replicas, recording the previous partition, who and when')
            [CompletionResult]::new('resume', 'resume', [CompletionResultType]::ParameterValue, 'Undo a freeze: the recorded partition comes back (refused when another writer moved it since, unless --force)')
            [CompletionResult]::new('wait', 'wait', [CompletionResultType]::ParameterValue, 'Wait for a rollout, partition-aware (and plan-aware: a plan under way is waited for): 0 done, 1 timeout, 3 stuck (naming pod and rule)')
            [CompletionResult]::new('rollout', 'rollout', [CompletionResultType]::ParameterValue, 'Run a rollout plan: open the update step by step (counts or percentages of replicas), each gated on its pods being updated, Ready and available, a bake and your checks; halt on anything wrong. The plan is recorded on the set: a rerun resumes it')
            [CompletionResult]::new('approve', 'approve', [CompletionResultType]::ParameterValue, 'Pass a plan''s manual gate (a `pause` step)')
            [CompletionResult]::new('abort', 'abort', [CompletionResultType]::ParameterValue, 'The forced rollback: the template back to the previous revision and the pods stuck on the broken one deleted (a plan under way is halted first). Shows what it will do first')
            [CompletionResult]::new('play', 'play', [CompletionResultType]::ParameterValue, 'Play a scenario script against a cluster in real time, printing the timeline')
            [CompletionResult]::new('drive', 'drive', [CompletionResultType]::ParameterValue, 'Be the StatefulSet controller with no terminal (in the cluster, or beside it): the namespace''s sets (-n NS, several comma-separated, or -A every namespace) reconciled by ststui''s core, one driver at a time (a Lease per namespace), JSON lines on stdout, /healthz and /readyz, SIGTERM gives the leases up. Only where kube-controller-manager runs without its StatefulSet controller')
            [CompletionResult]::new('fake-kubelet', 'fake-kubelet', [CompletionResultType]::ParameterValue, 'A stand-in kubelet for test clusters without nodes (binds and runs every unscheduled pod; obeys the scenario''s kubelet settings and faults). Never on a real cluster')
            [CompletionResult]::new('completion', 'completion', [CompletionResultType]::ParameterValue, 'Print a shell completion script (bash, zsh, fish, elvish or powershell)')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print the manual page (ststui(1), or a verb''s: `ststui man rollout | man -l -`), or write every page into a folder (--out-dir)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'ststui;sim' {
            [CompletionResult]::new('--script', '--script', [CompletionResultType]::ParameterName, 'A scenario file to play (headless: to its end on virtual time; interactive: in real time)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Timeline format for --headless')
            [CompletionResult]::new('--seed', '--seed', [CompletionResultType]::ParameterName, 'Seed for all randomness (soak and faults). Same script and seed, same timeline')
            [CompletionResult]::new('-f', '-f', [CompletionResultType]::ParameterName, 'Create the StatefulSets of a Kubernetes manifest (multi-document YAML). Repeatable')
            [CompletionResult]::new('--filename', '--filename', [CompletionResultType]::ParameterName, 'Create the StatefulSets of a Kubernetes manifest (multi-document YAML). Repeatable')
            [CompletionResult]::new('--speed', '--speed', [CompletionResultType]::ParameterName, 'Virtual seconds per wall second in the interactive console (and while serving)')
            [CompletionResult]::new('--serve', '--serve', [CompletionResultType]::ParameterName, 'Serve the simulated cluster as a Kubernetes API on this loopback address (plain HTTP, no authentication; e.g. 127.0.0.1:6443, port 0 picks a free one)')
            [CompletionResult]::new('--write-kubeconfig', '--write-kubeconfig', [CompletionResultType]::ParameterName, 'With --serve: write a kubeconfig for it to FILE (context ststui-sim)')
            [CompletionResult]::new('--clusters', '--clusters', [CompletionResultType]::ParameterName, 'With --serve --headless: serve several simulated clusters, one per name, each its own API on its own port (ADDR''s port and the next ones; port 0 picks free ones) with its own copy of the scenario; --write-kubeconfig then writes a context per cluster. E.g. eu,us,ap, to rehearse a fleet (`ststui rollout NAME --contexts eu,us,ap`)')
            [CompletionResult]::new('--deny', '--deny', [CompletionResultType]::ParameterName, 'With --serve: refuse this permission with 403 Forbidden (VERB:RESOURCE, e.g. patch:statefulsets, patch:statefulsets/scale, delete:pods). Repeatable')
            [CompletionResult]::new('--soak', '--soak', [CompletionResultType]::ParameterName, 'Run N randomized soak scenarios, checking invariants after every event')
            [CompletionResult]::new('--kube-version', '--kube-version', [CompletionResultType]::ParameterName, 'Upstream controller semantics to reproduce (1.31 to 1.37)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Kubeconfig file (real-cluster mode and the verbs)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'Kubeconfig context (real-cluster mode and the verbs)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--log-file', '--log-file', [CompletionResultType]::ParameterName, 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)')
            [CompletionResult]::new('--feature-gates', '--feature-gates', [CompletionResultType]::ParameterName, 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults')
            [CompletionResult]::new('--headless', '--headless', [CompletionResultType]::ParameterName, 'No terminal UI: run the script (or the manifests) and print the timeline on stdout; with --serve, serve until SIGINT/SIGTERM')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ststui;explain' {
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Output: text for people; json or yaml for programs (documented in docs/verbs.md, versioned)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Output: text for people; json or yaml for programs (documented in docs/verbs.md, versioned)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Give up after this long, e.g. 90s (an unreachable or failing server is retried until then)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Kubeconfig file (real-cluster mode and the verbs)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'Kubeconfig context (real-cluster mode and the verbs)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--log-file', '--log-file', [CompletionResultType]::ParameterName, 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)')
            [CompletionResult]::new('--feature-gates', '--feature-gates', [CompletionResultType]::ParameterName, 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ststui;step' {
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'Set the partition to N instead of lowering it by one (above the partition now: only with --force)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Give up after this long (exit 1), e.g. 90s, 10m: the first view, the write and its read-back, and with --wait the wait (default: 30s, no limit on the wait)')
            [CompletionResult]::new('--stuck-after', '--stuck-after', [CompletionResultType]::ParameterName, 'With --wait: stuck (exit 3) after this long without progress')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Kubeconfig file (real-cluster mode and the verbs)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'Kubeconfig context (real-cluster mode and the verbs)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--log-file', '--log-file', [CompletionResultType]::ParameterName, 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)')
            [CompletionResult]::new('--feature-gates', '--feature-gates', [CompletionResultType]::ParameterName, 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Step even while ordinals already open are not updated and Ready, or while a rollout group''s plan has the set waiting or rolling, or raise the partition with --to')
            [CompletionResult]::new('--wait', '--wait', [CompletionResultType]::ParameterName, 'Then wait for the newly opened ordinals to be updated and Ready')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ststui;freeze' {
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Give up after this long, e.g. 90s (a lost reply is read back until then)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Kubeconfig file (real-cluster mode and the verbs)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'Kubeconfig context (real-cluster mode and the verbs)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--log-file', '--log-file', [CompletionResultType]::ParameterName, 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)')
            [CompletionResult]::new('--feature-gates', '--feature-gates', [CompletionResultType]::ParameterName, 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ststui;resume' {
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Give up after this long, e.g. 90s (a lost reply is read back until then)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Kubeconfig file (real-cluster mode and the verbs)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'Kubeconfig context (real-cluster mode and the verbs)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--log-file', '--log-file', [CompletionResultType]::ParameterName, 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)')
            [CompletionResult]::new('--feature-gates', '--feature-gates', [CompletionResultType]::ParameterName, 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Resume although another writer moved the partition since the freeze (writing the recorded partition over theirs), or drop a freeze whose record is not a partition')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ststui;wait' {
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Give up after this long (exit 1), e.g. 90s, 10m; default: no limit')
            [CompletionResult]::new('--stuck-after', '--stuck-after', [CompletionResultType]::ParameterName, 'Stuck (exit 3) after this long without progress')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Kubeconfig file (real-cluster mode and the verbs)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'Kubeconfig context (real-cluster mode and the verbs)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--log-file', '--log-file', [CompletionResultType]::ParameterName, 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)')
            [CompletionResult]::new('--feature-gates', '--feature-gates', [CompletionResultType]::ParameterName, 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults')
            [CompletionResult]::new('--full', '--full', [CompletionResultType]::ParameterName, 'Wait until every pod runs the update revision, whatever the partition (without it, a partition or OnDelete holding pods on an older revision is done as the spec asks: exit 0, "held: …")')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ststui;rollout' {
            [CompletionResult]::new('--group', '--group', [CompletionResultType]::ParameterName, 'Roll a group of sets one at a time (zones, racks, tiers): their names in rolling order (a,b,c), or a shell pattern (ingester-zone-*: alphabetical). Each set runs the plan; a set starts only when every pod of every set of the group is updated or untouched, Ready and available')
            [CompletionResult]::new('-l', '-l', [CompletionResultType]::ParameterName, 'Roll the sets this label selector lists as a group, alphabetical (-l rollout-group=ingester: grafana/rollout-operator''s groups are shown, never driven)')
            [CompletionResult]::new('--selector', '--selector', [CompletionResultType]::ParameterName, 'Roll the sets this label selector lists as a group, alphabetical (-l rollout-group=ingester: grafana/rollout-operator''s groups are shown, never driven)')
            [CompletionResult]::new('--order', '--order', [CompletionResultType]::ParameterName, 'A group''s order: `alphabetical`, or tiers (fe,be: a set rolls with the first tier its name contains as a dash-separated word)')
            [CompletionResult]::new('--zone-bake', '--zone-bake', [CompletionResultType]::ParameterName, 'In a group: every pod of the group stays updated or untouched, Ready and available this long after a set is done before the next starts, e.g. 10m')
            [CompletionResult]::new('--contexts', '--contexts', [CompletionResultType]::ParameterName, 'A fleet: roll NAME (or the group -l/--group picks in each cluster) in each of these kubeconfig contexts, one cluster at a time, in the order given (a cluster starts once the one before is done by revision: every pod on the update revision, Ready and available, the spec observed)')
            [CompletionResult]::new('--cluster-bake', '--cluster-bake', [CompletionResultType]::ParameterName, 'In a fleet: every pod of the clusters done stays updated, Ready and available this long before the next cluster starts, e.g. 30m (--zone-bake: between a group''s sets within a cluster)')
            [CompletionResult]::new('--batches', '--batches', [CompletionResultType]::ParameterName, 'In a group, instead of --steps: each set opens these batches of pods, the last repeated (1,2,4 opens 1, then 2 more, then 4 more at a time), then the rest')
            [CompletionResult]::new('--steps', '--steps', [CompletionResultType]::ParameterName, 'Pods on the update revision after each step, from the highest ordinal down: counts, percentages of the replicas (rounded up, never all before 100%) or `pause` (a manual gate), e.g. 1,25%,pause,50%,100%. Needed for a new plan; a rerun resumes the recorded one')
            [CompletionResult]::new('--bake', '--bake', [CompletionResultType]::ParameterName, 'After a step''s pods are updated, Ready and available, every pod of the set must stay Ready and restart nothing for this long, e.g. 2m (at most 24h). A resume states it again: a recorded bake is never taken from the set')
            [CompletionResult]::new('--check', '--check', [CompletionResultType]::ParameterName, 'A command run after each step''s bake (`sh -c`), with STSTUI_NAMESPACE, STSTUI_SET, STSTUI_STEP, STSTUI_STEPS, STSTUI_PARTITION, STSTUI_PODS and STSTUI_BAKE set; a non-zero exit halts the plan. Repeatable. Only this command''s checks ever run: a resume whose record lists others is refused without --force')
            [CompletionResult]::new('--check-timeout', '--check-timeout', [CompletionResultType]::ParameterName, 'A check running longer is killed and fails')
            [CompletionResult]::new('--stuck-after', '--stuck-after', [CompletionResultType]::ParameterName, 'A step that makes no progress for this long (no pod of it created on the update revision or turning Ready) halts the plan')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Give up after this long (exit 1; the plan stays recorded where it is, a rerun resumes)')
            [CompletionResult]::new('--on-failure', '--on-failure', [CompletionResultType]::ParameterName, 'On a failure: hold the partition where it is, or undo (the template back to the previous revision, the step''s stuck pods deleted)')
            [CompletionResult]::new('-o', '-o', [CompletionResultType]::ParameterName, 'Progress as text lines or JSON lines')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'Progress as text lines or JSON lines')
            [CompletionResult]::new('--image', '--image', [CompletionResultType]::ParameterName, 'First hold the set (every set of a group: freeze it, unless held already) and set its image — `app=nginx:1.26` or `nginx:1.26` (the first container) — then run the plan: one command instead of three. A Recreate set cannot be held: its plan sets the image itself, once the step''s gates passed')
            [CompletionResult]::new('--max-restarts', '--max-restarts', [CompletionResultType]::ParameterName, 'A pod of the step whose containers restart this many times halts the plan at once (a crash-looping canary fails fast instead of after --stuck-after)')
            [CompletionResult]::new('--pre-delete', '--pre-delete', [CompletionResultType]::ParameterName, 'A gate run before each pod goes (OnDelete: before ststui evicts it; RollingUpdate: before the partition is lowered onto it, one ordinal at a time): cmd:COMMAND (here, `sh -c`), exec:CONTAINER -- COMMAND… (in the pod) or http::PORT/PATH (through the API server''s pod proxy). Exit 0 / 2xx goes, exit 75 / HTTP 503 or 429 is "not yet", anything else halts. Placeholders {namespace} {set} {pod} {ordinal} {zone} {old} {new} {step}, also in STSTUI_* variables')
            [CompletionResult]::new('--post-ready', '--post-ready', [CompletionResultType]::ParameterName, 'A gate run once a replaced pod is updated, Ready and available, before the next goes')
            [CompletionResult]::new('--before-step', '--before-step', [CompletionResultType]::ParameterName, 'A whole-cluster gate run before each step''s pods start to go (and again after --recheck)')
            [CompletionResult]::new('--recheck', '--recheck', [CompletionResultType]::ParameterName, 'Ask --before-step again this long after it passed, e.g. 22s (0s: once)')
            [CompletionResult]::new('--gate-interval', '--gate-interval', [CompletionResultType]::ParameterName, 'A gate that says "not yet" is asked again after this long')
            [CompletionResult]::new('--gate-timeout', '--gate-timeout', [CompletionResultType]::ParameterName, 'One gate run longer than this is killed and fails')
            [CompletionResult]::new('--gate-tries', '--gate-tries', [CompletionResultType]::ParameterName, 'How many "not yet"s a gate may answer before the plan halts (with the 10s interval, 180 is 30 minutes: longer than a broker''s recovery)')
            [CompletionResult]::new('--last', '--last', [CompletionResultType]::ParameterName, 'OnDelete: roll this pod last in its step (the primary, the active controller)')
            [CompletionResult]::new('--last-by', '--last-by', [CompletionResultType]::ParameterName, 'OnDelete: a gate whose first output line names the pod to roll last (asked again before each pod goes: leadership moves)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Kubeconfig file (real-cluster mode and the verbs)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'Kubeconfig context (real-cluster mode and the verbs)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--log-file', '--log-file', [CompletionResultType]::ParameterName, 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)')
            [CompletionResult]::new('--feature-gates', '--feature-gates', [CompletionResultType]::ParameterName, 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults')
            [CompletionResult]::new('--approve-between', '--approve-between', [CompletionResultType]::ParameterName, 'In a fleet: before each next cluster starts, wait for `ststui approve` (on its first set, in its context) — the runner says the command')
            [CompletionResult]::new('--continue', '--continue', [CompletionResultType]::ParameterName, 'Go on past a halt from the halted step (once what halted it is fixed), with this command''s bake, checks and failure policy')
            [CompletionResult]::new('--force', '--force', [CompletionResultType]::ParameterName, 'Go on although the recorded plan differs from this command (this command''s steps, bake, checks and policy win and are recorded), start a plan over an invalid record, take over a lease that claims more than any runner writes, or take a set carrying another group''s part into this group')
            [CompletionResult]::new('--wait-lease', '--wait-lease', [CompletionResultType]::ParameterName, 'While another runner''s lease holds, wait for it to run out instead of refusing')
            [CompletionResult]::new('--replace-stuck', '--replace-stuck', [CompletionResultType]::ParameterName, 'Replace a step''s pods stuck broken on an older revision (CrashLoopBackOff, ImagePullBackOff, CreateContainerError…) first, at once and without their pre-delete gate: they serve nothing, so it costs no availability. Without it they are only named')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ststui;approve' {
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Give up after this long, e.g. 90s (a lost reply is read back until then)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Kubeconfig file (real-cluster mode and the verbs)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'Kubeconfig context (real-cluster mode and the verbs)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--log-file', '--log-file', [CompletionResultType]::ParameterName, 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)')
            [CompletionResult]::new('--feature-gates', '--feature-gates', [CompletionResultType]::ParameterName, 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ststui;abort' {
            [CompletionResult]::new('--force-delete', '--force-delete', [CompletionResultType]::ParameterName, 'Delete a stuck pod its disruption budget will not let go (the eviction refused), giving the reason; recorded on the set (ststui.io/force-deleted) and said')
            [CompletionResult]::new('--contexts', '--contexts', [CompletionResultType]::ParameterName, 'NAME is in a fleet: revert every cluster its plan touched, newest first (name the fleet''s contexts, in any order: the clusters are matched by identity)')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'Give up after this long, e.g. 90s')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Kubeconfig file (real-cluster mode and the verbs)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'Kubeconfig context (real-cluster mode and the verbs)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--log-file', '--log-file', [CompletionResultType]::ParameterName, 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)')
            [CompletionResult]::new('--feature-gates', '--feature-gates', [CompletionResultType]::ParameterName, 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults')
            [CompletionResult]::new('--yes', '--yes', [CompletionResultType]::ParameterName, 'Do it without asking (needed without a terminal)')
            [CompletionResult]::new('--group', '--group', [CompletionResultType]::ParameterName, 'NAME is in a rollout group: revert the group instead (every set its plan touched, newest first). Without it, only NAME is reverted')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ststui;play' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'Timeline format on stdout')
            [CompletionResult]::new('--timeout', '--timeout', [CompletionResultType]::ParameterName, 'How long an unreachable or failing server, and the first listings, are waited for before exit 4, e.g. 90s')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Kubeconfig file (real-cluster mode and the verbs)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'Kubeconfig context (real-cluster mode and the verbs)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--log-file', '--log-file', [CompletionResultType]::ParameterName, 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)')
            [CompletionResult]::new('--feature-gates', '--feature-gates', [CompletionResultType]::ParameterName, 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults')
            [CompletionResult]::new('--drive', '--drive', [CompletionResultType]::ParameterName, 'ststui''s own controller drives the namespace''s StatefulSets (only on an API server whose kube-controller-manager runs without its StatefulSet controller); `pause`, `resume` and `step` may then be played')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ststui;drive' {
            [CompletionResult]::new('--health-addr', '--health-addr', [CompletionResultType]::ParameterName, 'Where /healthz (the election loops go round) and /readyz (every lease held) answer; the default is a free loopback port, said in the `start` record')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Kubeconfig file (real-cluster mode and the verbs)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'Kubeconfig context (real-cluster mode and the verbs)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--log-file', '--log-file', [CompletionResultType]::ParameterName, 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)')
            [CompletionResult]::new('--feature-gates', '--feature-gates', [CompletionResultType]::ParameterName, 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults')
            [CompletionResult]::new('-A', '-A ', [CompletionResultType]::ParameterName, 'Every namespace, found by a watch (a new one is driven once seen); not with -n')
            [CompletionResult]::new('--all-namespaces', '--all-namespaces', [CompletionResultType]::ParameterName, 'Every namespace, found by a watch (a new one is driven once seen); not with -n')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ststui;fake-kubelet' {
            [CompletionResult]::new('--node', '--node', [CompletionResultType]::ParameterName, 'The Node to register and serve')
            [CompletionResult]::new('--exec-port', '--exec-port', [CompletionResultType]::ParameterName, 'Serve the kubelet''s exec endpoint over HTTPS on this loopback port (0: any free one), declared in the node''s status so kube-apiserver proxies `kubectl exec` and `exec:` gates to it. The command runs nothing: it answers exit 0 while the pod is Ready, 75 otherwise')
            [CompletionResult]::new('--tls-cert', '--tls-cert', [CompletionResultType]::ParameterName, 'The endpoint''s certificate (PEM; self-signed will do: the API server verifies a kubelet only when given --kubelet-certificate-authority)')
            [CompletionResult]::new('--tls-key', '--tls-key', [CompletionResultType]::ParameterName, 'The endpoint''s private key (PEM)')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Kubeconfig file (real-cluster mode and the verbs)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'Kubeconfig context (real-cluster mode and the verbs)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--log-file', '--log-file', [CompletionResultType]::ParameterName, 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)')
            [CompletionResult]::new('--feature-gates', '--feature-gates', [CompletionResultType]::ParameterName, 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ststui;completion' {
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Kubeconfig file (real-cluster mode and the verbs)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'Kubeconfig context (real-cluster mode and the verbs)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--log-file', '--log-file', [CompletionResultType]::ParameterName, 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)')
            [CompletionResult]::new('--feature-gates', '--feature-gates', [CompletionResultType]::ParameterName, 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ststui;man' {
            [CompletionResult]::new('--out-dir', '--out-dir', [CompletionResultType]::ParameterName, 'Write every page (ststui.1, ststui-VERB.1, …) into this folder instead, e.g. /usr/local/share/man/man1')
            [CompletionResult]::new('--kubeconfig', '--kubeconfig', [CompletionResultType]::ParameterName, 'Kubeconfig file (real-cluster mode and the verbs)')
            [CompletionResult]::new('--context', '--context', [CompletionResultType]::ParameterName, 'Kubeconfig context (real-cluster mode and the verbs)')
            [CompletionResult]::new('-n', '-n', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--namespace', '--namespace', [CompletionResultType]::ParameterName, 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)')
            [CompletionResult]::new('--log-file', '--log-file', [CompletionResultType]::ParameterName, 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)')
            [CompletionResult]::new('--feature-gates', '--feature-gates', [CompletionResultType]::ParameterName, 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'ststui;help' {
            [CompletionResult]::new('sim', 'sim', [CompletionResultType]::ParameterValue, 'Run against the embedded simulated cluster (no Kubernetes needed)')
            [CompletionResult]::new('explain', 'explain', [CompletionResultType]::ParameterValue, 'Print what the console shows about a set: grid, revisions, health, the controller''s next action and blocker, and kubectl''s verdict beside ours')
            [CompletionResult]::new('step', 'step', [CompletionResultType]::ParameterValue, 'Lower the partition by one (or to N): the next ordinals of a canary roll out')
            [CompletionResult]::new('freeze', 'freeze', [CompletionResultType]::ParameterValue, 'Hold the rollout: partition to replicas, recording the previous partition, who and when')
            [CompletionResult]::new('resume', 'resume', [CompletionResultType]::ParameterValue, 'Undo a freeze: the recorded partition comes back (refused when another writer moved it since, unless --force)')
            [CompletionResult]::new('wait', 'wait', [CompletionResultType]::ParameterValue, 'Wait for a rollout, partition-aware (and plan-aware: a plan under way is waited for): 0 done, 1 timeout, 3 stuck (naming pod and rule)')
            [CompletionResult]::new('rollout', 'rollout', [CompletionResultType]::ParameterValue, 'Run a rollout plan: open the update step by step (counts or percentages of replicas), each gated on its pods being updated, Ready and available, a bake and your checks; halt on anything wrong. The plan is recorded on the set: a rerun resumes it')
            [CompletionResult]::new('approve', 'approve', [CompletionResultType]::ParameterValue, 'Pass a plan''s manual gate (a `pause` step)')
            [CompletionResult]::new('abort', 'abort', [CompletionResultType]::ParameterValue, 'The forced rollback: the template back to the previous revision and the pods stuck on the broken one deleted (a plan under way is halted first). Shows what it will do first')
            [CompletionResult]::new('play', 'play', [CompletionResultType]::ParameterValue, 'Play a scenario script against a cluster in real time, printing the timeline')
            [CompletionResult]::new('drive', 'drive', [CompletionResultType]::ParameterValue, 'Be the StatefulSet controller with no terminal (in the cluster, or beside it): the namespace''s sets (-n NS, several comma-separated, or -A every namespace) reconciled by ststui''s core, one driver at a time (a Lease per namespace), JSON lines on stdout, /healthz and /readyz, SIGTERM gives the leases up. Only where kube-controller-manager runs without its StatefulSet controller')
            [CompletionResult]::new('fake-kubelet', 'fake-kubelet', [CompletionResultType]::ParameterValue, 'A stand-in kubelet for test clusters without nodes (binds and runs every unscheduled pod; obeys the scenario''s kubelet settings and faults). Never on a real cluster')
            [CompletionResult]::new('completion', 'completion', [CompletionResultType]::ParameterValue, 'Print a shell completion script (bash, zsh, fish, elvish or powershell)')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print the manual page (ststui(1), or a verb''s: `ststui man rollout | man -l -`), or write every page into a folder (--out-dir)')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'ststui;help;sim' {
            break
        }
        'ststui;help;explain' {
            break
        }
        'ststui;help;step' {
            break
        }
        'ststui;help;freeze' {
            break
        }
        'ststui;help;resume' {
            break
        }
        'ststui;help;wait' {
            break
        }
        'ststui;help;rollout' {
            break
        }
        'ststui;help;approve' {
            break
        }
        'ststui;help;abort' {
            break
        }
        'ststui;help;play' {
            break
        }
        'ststui;help;drive' {
            break
        }
        'ststui;help;fake-kubelet' {
            break
        }
        'ststui;help;completion' {
            break
        }
        'ststui;help;man' {
            break
        }
        'ststui;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
