
use builtin;
use str;

set edit:completion:arg-completer[ststui] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'ststui'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'ststui'= {
            cand --kubeconfig 'Kubeconfig file (real-cluster mode and the verbs)'
            cand --context 'Kubeconfig context (real-cluster mode and the verbs)'
            cand -n 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --namespace 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --log-file 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)'
            cand --feature-gates 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults'
            cand --contexts 'A fleet''s view: NAME (or the sets -l selects) in each of these kubeconfig contexts, side by side as one matrix, read-only (`ststui rollout … --contexts` rolls a fleet)'
            cand -l 'With --contexts: the sets this label selector lists in each cluster (a group in each), e.g. -l rollout-group=ingester'
            cand --selector 'With --contexts: the sets this label selector lists in each cluster (a group in each), e.g. -l rollout-group=ingester'
            cand -A 'Every namespace''s StatefulSets in the list (real-cluster mode)'
            cand --all-namespaces 'Every namespace''s StatefulSets in the list (real-cluster mode)'
            cand --read-only 'Make no writes to the cluster at all (real-cluster mode): watch and explain only'
            cand --drive 'Be the StatefulSet controller: ststui''s core reconciles the namespace''s sets (or NAME only), with pause and step. Only where kube-controller-manager runs without its StatefulSet controller (--controllers=*,-statefulset-controller); refused, or stopped at once, when another controller is seen at work'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
            cand sim 'Run against the embedded simulated cluster (no Kubernetes needed)'
            cand explain 'Print what the console shows about a set: grid, revisions, health, the controller''s next action and blocker, and kubectl''s verdict beside ours'
            cand step 'Lower the partition by one (or to N): the next ordinals of a canary roll out'
            cand freeze 'Hold the rollout: partition to replicas, recording the previous partition, who and when'
            cand resume 'Undo a freeze: the recorded partition comes back (refused when another writer moved it since, unless --force)'
            cand wait 'Wait for a rollout, partition-aware (and plan-aware: a plan under way is waited for): 0 done, 1 timeout, 3 stuck (naming pod and rule)'
            cand rollout 'Run a rollout plan: open the update step by step (counts or percentages of replicas), each gated on its pods being updated, Ready and available, a bake and your checks; halt on anything wrong. The plan is recorded on the set: a rerun resumes it'
            cand approve 'Pass a plan''s manual gate (a `pause` step)'
            cand abort 'The forced rollback: the template back to the previous revision and the pods stuck on the broken one deleted (a plan under way is halted first). Shows what it will do first'
            cand play 'Play a scenario script against a cluster in real time, printing the timeline'
            cand drive 'Be the StatefulSet controller with no terminal (in the cluster, or beside it): the namespace''s sets (-n NS, several comma-separated, or -A every namespace) reconciled by ststui''s core, one driver at a time (a Lease per namespace), JSON lines on stdout, /healthz and /readyz, SIGTERM gives the leases up. Only where kube-controller-manager runs without its StatefulSet controller'
            cand fake-kubelet 'A stand-in kubelet for test clusters without nodes (binds and runs every unscheduled pod; obeys the scenario''s kubelet settings and faults). Never on a real cluster'
            cand completion 'Print a shell completion script (bash, zsh, fish, elvish or powershell)'
            cand man 'Print the manual page (ststui(1), or a verb''s: `ststui man rollout | man -l -`), or write every page into a folder (--out-dir)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'ststui;sim'= {
            cand --script 'A scenario file to play (headless: to its end on virtual time; interactive: in real time)'
            cand --format 'Timeline format for --headless'
            cand --seed 'Seed for all randomness (soak and faults). Same script and seed, same timeline'
            cand -f 'Create the StatefulSets of a Kubernetes manifest (multi-document YAML). Repeatable'
            cand --filename 'Create the StatefulSets of a Kubernetes manifest (multi-document YAML). Repeatable'
            cand --speed 'Virtual seconds per wall second in the interactive console (and while serving)'
            cand --serve 'Serve the simulated cluster as a Kubernetes API on this loopback address (plain HTTP, no authentication; e.g. 127.0.0.1:6443, port 0 picks a free one)'
            cand --write-kubeconfig 'With --serve: write a kubeconfig for it to FILE (context ststui-sim)'
            cand --clusters 'With --serve --headless: serve several simulated clusters, one per name, each its own API on its own port (ADDR''s port and the next ones; port 0 picks free ones) with its own copy of the scenario; --write-kubeconfig then writes a context per cluster. E.g. eu,us,ap, to rehearse a fleet (`ststui rollout NAME --contexts eu,us,ap`)'
            cand --deny 'With --serve: refuse this permission with 403 Forbidden (VERB:RESOURCE, e.g. patch:statefulsets, patch:statefulsets/scale, delete:pods). Repeatable'
            cand --soak 'Run N randomized soak scenarios, checking invariants after every event'
            cand --kube-version 'Upstream controller semantics to reproduce (1.31 to 1.37)'
            cand --kubeconfig 'Kubeconfig file (real-cluster mode and the verbs)'
            cand --context 'Kubeconfig context (real-cluster mode and the verbs)'
            cand -n 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --namespace 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --log-file 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)'
            cand --feature-gates 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults'
            cand --headless 'No terminal UI: run the script (or the manifests) and print the timeline on stdout; with --serve, serve until SIGINT/SIGTERM'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ststui;explain'= {
            cand -o 'Output: text for people; json or yaml for programs (documented in docs/verbs.md, versioned)'
            cand --output 'Output: text for people; json or yaml for programs (documented in docs/verbs.md, versioned)'
            cand --timeout 'Give up after this long, e.g. 90s (an unreachable or failing server is retried until then)'
            cand --kubeconfig 'Kubeconfig file (real-cluster mode and the verbs)'
            cand --context 'Kubeconfig context (real-cluster mode and the verbs)'
            cand -n 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --namespace 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --log-file 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)'
            cand --feature-gates 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ststui;step'= {
            cand --to 'Set the partition to N instead of lowering it by one (above the partition now: only with --force)'
            cand --timeout 'Give up after this long (exit 1), e.g. 90s, 10m: the first view, the write and its read-back, and with --wait the wait (default: 30s, no limit on the wait)'
            cand --stuck-after 'With --wait: stuck (exit 3) after this long without progress'
            cand --kubeconfig 'Kubeconfig file (real-cluster mode and the verbs)'
            cand --context 'Kubeconfig context (real-cluster mode and the verbs)'
            cand -n 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --namespace 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --log-file 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)'
            cand --feature-gates 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults'
            cand --force 'Step even while ordinals already open are not updated and Ready, or while a rollout group''s plan has the set waiting or rolling, or raise the partition with --to'
            cand --wait 'Then wait for the newly opened ordinals to be updated and Ready'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ststui;freeze'= {
            cand --timeout 'Give up after this long, e.g. 90s (a lost reply is read back until then)'
            cand --kubeconfig 'Kubeconfig file (real-cluster mode and the verbs)'
            cand --context 'Kubeconfig context (real-cluster mode and the verbs)'
            cand -n 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --namespace 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --log-file 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)'
            cand --feature-gates 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ststui;resume'= {
            cand --timeout 'Give up after this long, e.g. 90s (a lost reply is read back until then)'
            cand --kubeconfig 'Kubeconfig file (real-cluster mode and the verbs)'
            cand --context 'Kubeconfig context (real-cluster mode and the verbs)'
            cand -n 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --namespace 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --log-file 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)'
            cand --feature-gates 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults'
            cand --force 'Resume although another writer moved the partition since the freeze (writing the recorded partition over theirs), or drop a freeze whose record is not a partition'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ststui;wait'= {
            cand --timeout 'Give up after this long (exit 1), e.g. 90s, 10m; default: no limit'
            cand --stuck-after 'Stuck (exit 3) after this long without progress'
            cand --kubeconfig 'Kubeconfig file (real-cluster mode and the verbs)'
            cand --context 'Kubeconfig context (real-cluster mode and the verbs)'
            cand -n 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --namespace 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --log-file 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)'
            cand --feature-gates 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults'
            cand --full 'Wait until every pod runs the update revision, whatever the partition (without it, a partition or OnDelete holding pods on an older revision is done as the spec asks: exit 0, "held: …")'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ststui;rollout'= {
            cand --group 'Roll a group of sets one at a time (zones, racks, tiers): their names in rolling order (a,b,c), or a shell pattern (ingester-zone-*: alphabetical). Each set runs the plan; a set starts only when every pod of every set of the group is updated or untouched, Ready and available'
            cand -l 'Roll the sets this label selector lists as a group, alphabetical (-l rollout-group=ingester: grafana/rollout-operator''s groups are shown, never driven)'
            cand --selector 'Roll the sets this label selector lists as a group, alphabetical (-l rollout-group=ingester: grafana/rollout-operator''s groups are shown, never driven)'
            cand --order 'A group''s order: `alphabetical`, or tiers (fe,be: a set rolls with the first tier its name contains as a dash-separated word)'
            cand --zone-bake 'In a group: every pod of the group stays updated or untouched, Ready and available this long after a set is done before the next starts, e.g. 10m'
            cand --contexts 'A fleet: roll NAME (or the group -l/--group picks in each cluster) in each of these kubeconfig contexts, one cluster at a time, in the order given (a cluster starts once the one before is done by revision: every pod on the update revision, Ready and available, the spec observed)'
            cand --cluster-bake 'In a fleet: every pod of the clusters done stays updated, Ready and available this long before the next cluster starts, e.g. 30m (--zone-bake: between a group''s sets within a cluster)'
            cand --batches 'In a group, instead of --steps: each set opens these batches of pods, the last repeated (1,2,4 opens 1, then 2 more, then 4 more at a time), then the rest'
            cand --steps 'Pods on the update revision after each step, from the highest ordinal down: counts, percentages of the replicas (rounded up, never all before 100%) or `pause` (a manual gate), e.g. 1,25%,pause,50%,100%. Needed for a new plan; a rerun resumes the recorded one'
            cand --bake 'After a step''s pods are updated, Ready and available, every pod of the set must stay Ready and restart nothing for this long, e.g. 2m (at most 24h). A resume states it again: a recorded bake is never taken from the set'
            cand --check 'A command run after each step''s bake (`sh -c`), with STSTUI_NAMESPACE, STSTUI_SET, STSTUI_STEP, STSTUI_STEPS, STSTUI_PARTITION, STSTUI_PODS and STSTUI_BAKE set; a non-zero exit halts the plan. Repeatable. Only this command''s checks ever run: a resume whose record lists others is refused without --force'
            cand --check-timeout 'A check running longer is killed and fails'
            cand --stuck-after 'A step that makes no progress for this long (no pod of it created on the update revision or turning Ready) halts the plan'
            cand --timeout 'Give up after this long (exit 1; the plan stays recorded where it is, a rerun resumes)'
            cand --on-failure 'On a failure: hold the partition where it is, or undo (the template back to the previous revision, the step''s stuck pods deleted)'
            cand -o 'Progress as text lines or JSON lines'
            cand --output 'Progress as text lines or JSON lines'
            cand --image 'First hold the set (every set of a group: freeze it, unless held already) and set its image — `app=nginx:1.26` or `nginx:1.26` (the first container) — then run the plan: one command instead of three. A Recreate set cannot be held: its plan sets the image itself, once the step''s gates passed'
            cand --max-restarts 'A pod of the step whose containers restart this many times halts the plan at once (a crash-looping canary fails fast instead of after --stuck-after)'
            cand --pre-delete 'A gate run before each pod goes (OnDelete: before ststui evicts it; RollingUpdate: before the partition is lowered onto it, one ordinal at a time): cmd:COMMAND (here, `sh -c`), exec:CONTAINER -- COMMAND… (in the pod) or http::PORT/PATH (through the API server''s pod proxy). Exit 0 / 2xx goes, exit 75 / HTTP 503 or 429 is "not yet", anything else halts. Placeholders {namespace} {set} {pod} {ordinal} {zone} {old} {new} {step}, also in STSTUI_* variables'
            cand --post-ready 'A gate run once a replaced pod is updated, Ready and available, before the next goes'
            cand --before-step 'A whole-cluster gate run before each step''s pods start to go (and again after --recheck)'
            cand --recheck 'Ask --before-step again this long after it passed, e.g. 22s (0s: once)'
            cand --gate-interval 'A gate that says "not yet" is asked again after this long'
            cand --gate-timeout 'One gate run longer than this is killed and fails'
            cand --gate-tries 'How many "not yet"s a gate may answer before the plan halts (with the 10s interval, 180 is 30 minutes: longer than a broker''s recovery)'
            cand --last 'OnDelete: roll this pod last in its step (the primary, the active controller)'
            cand --last-by 'OnDelete: a gate whose first output line names the pod to roll last (asked again before each pod goes: leadership moves)'
            cand --kubeconfig 'Kubeconfig file (real-cluster mode and the verbs)'
            cand --context 'Kubeconfig context (real-cluster mode and the verbs)'
            cand -n 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --namespace 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --log-file 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)'
            cand --feature-gates 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults'
            cand --approve-between 'In a fleet: before each next cluster starts, wait for `ststui approve` (on its first set, in its context) — the runner says the command'
            cand --continue 'Go on past a halt from the halted step (once what halted it is fixed), with this command''s bake, checks and failure policy'
            cand --force 'Go on although the recorded plan differs from this command (this command''s steps, bake, checks and policy win and are recorded), start a plan over an invalid record, take over a lease that claims more than any runner writes, or take a set carrying another group''s part into this group'
            cand --wait-lease 'While another runner''s lease holds, wait for it to run out instead of refusing'
            cand --replace-stuck 'Replace a step''s pods stuck broken on an older revision (CrashLoopBackOff, ImagePullBackOff, CreateContainerError…) first, at once and without their pre-delete gate: they serve nothing, so it costs no availability. Without it they are only named'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ststui;approve'= {
            cand --timeout 'Give up after this long, e.g. 90s (a lost reply is read back until then)'
            cand --kubeconfig 'Kubeconfig file (real-cluster mode and the verbs)'
            cand --context 'Kubeconfig context (real-cluster mode and the verbs)'
            cand -n 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --namespace 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --log-file 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)'
            cand --feature-gates 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ststui;abort'= {
            cand --force-delete 'Delete a stuck pod its disruption budget will not let go (the eviction refused), giving the reason; recorded on the set (ststui.io/force-deleted) and said'
            cand --contexts 'NAME is in a fleet: revert every cluster its plan touched, newest first (name the fleet''s contexts, in any order: the clusters are matched by identity)'
            cand --timeout 'Give up after this long, e.g. 90s'
            cand --kubeconfig 'Kubeconfig file (real-cluster mode and the verbs)'
            cand --context 'Kubeconfig context (real-cluster mode and the verbs)'
            cand -n 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --namespace 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --log-file 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)'
            cand --feature-gates 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults'
            cand --yes 'Do it without asking (needed without a terminal)'
            cand --group 'NAME is in a rollout group: revert the group instead (every set its plan touched, newest first). Without it, only NAME is reverted'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ststui;play'= {
            cand --format 'Timeline format on stdout'
            cand --timeout 'How long an unreachable or failing server, and the first listings, are waited for before exit 4, e.g. 90s'
            cand --kubeconfig 'Kubeconfig file (real-cluster mode and the verbs)'
            cand --context 'Kubeconfig context (real-cluster mode and the verbs)'
            cand -n 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --namespace 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --log-file 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)'
            cand --feature-gates 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults'
            cand --drive 'ststui''s own controller drives the namespace''s StatefulSets (only on an API server whose kube-controller-manager runs without its StatefulSet controller); `pause`, `resume` and `step` may then be played'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ststui;drive'= {
            cand --health-addr 'Where /healthz (the election loops go round) and /readyz (every lease held) answer; the default is a free loopback port, said in the `start` record'
            cand --kubeconfig 'Kubeconfig file (real-cluster mode and the verbs)'
            cand --context 'Kubeconfig context (real-cluster mode and the verbs)'
            cand -n 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --namespace 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --log-file 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)'
            cand --feature-gates 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults'
            cand -A 'Every namespace, found by a watch (a new one is driven once seen); not with -n'
            cand --all-namespaces 'Every namespace, found by a watch (a new one is driven once seen); not with -n'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ststui;fake-kubelet'= {
            cand --node 'The Node to register and serve'
            cand --exec-port 'Serve the kubelet''s exec endpoint over HTTPS on this loopback port (0: any free one), declared in the node''s status so kube-apiserver proxies `kubectl exec` and `exec:` gates to it. The command runs nothing: it answers exit 0 while the pod is Ready, 75 otherwise'
            cand --tls-cert 'The endpoint''s certificate (PEM; self-signed will do: the API server verifies a kubelet only when given --kubelet-certificate-authority)'
            cand --tls-key 'The endpoint''s private key (PEM)'
            cand --kubeconfig 'Kubeconfig file (real-cluster mode and the verbs)'
            cand --context 'Kubeconfig context (real-cluster mode and the verbs)'
            cand -n 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --namespace 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --log-file 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)'
            cand --feature-gates 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ststui;completion'= {
            cand --kubeconfig 'Kubeconfig file (real-cluster mode and the verbs)'
            cand --context 'Kubeconfig context (real-cluster mode and the verbs)'
            cand -n 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --namespace 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --log-file 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)'
            cand --feature-gates 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ststui;man'= {
            cand --out-dir 'Write every page (ststui.1, ststui-VERB.1, …) into this folder instead, e.g. /usr/local/share/man/man1'
            cand --kubeconfig 'Kubeconfig file (real-cluster mode and the verbs)'
            cand --context 'Kubeconfig context (real-cluster mode and the verbs)'
            cand -n 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --namespace 'Namespace (real-cluster mode and the verbs; default: the context''s namespace)'
            cand --log-file 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)'
            cand --feature-gates 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager''s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'ststui;help'= {
            cand sim 'Run against the embedded simulated cluster (no Kubernetes needed)'
            cand explain 'Print what the console shows about a set: grid, revisions, health, the controller''s next action and blocker, and kubectl''s verdict beside ours'
            cand step 'Lower the partition by one (or to N): the next ordinals of a canary roll out'
            cand freeze 'Hold the rollout: partition to replicas, recording the previous partition, who and when'
            cand resume 'Undo a freeze: the recorded partition comes back (refused when another writer moved it since, unless --force)'
            cand wait 'Wait for a rollout, partition-aware (and plan-aware: a plan under way is waited for): 0 done, 1 timeout, 3 stuck (naming pod and rule)'
            cand rollout 'Run a rollout plan: open the update step by step (counts or percentages of replicas), each gated on its pods being updated, Ready and available, a bake and your checks; halt on anything wrong. The plan is recorded on the set: a rerun resumes it'
            cand approve 'Pass a plan''s manual gate (a `pause` step)'
            cand abort 'The forced rollback: the template back to the previous revision and the pods stuck on the broken one deleted (a plan under way is halted first). Shows what it will do first'
            cand play 'Play a scenario script against a cluster in real time, printing the timeline'
            cand drive 'Be the StatefulSet controller with no terminal (in the cluster, or beside it): the namespace''s sets (-n NS, several comma-separated, or -A every namespace) reconciled by ststui''s core, one driver at a time (a Lease per namespace), JSON lines on stdout, /healthz and /readyz, SIGTERM gives the leases up. Only where kube-controller-manager runs without its StatefulSet controller'
            cand fake-kubelet 'A stand-in kubelet for test clusters without nodes (binds and runs every unscheduled pod; obeys the scenario''s kubelet settings and faults). Never on a real cluster'
            cand completion 'Print a shell completion script (bash, zsh, fish, elvish or powershell)'
            cand man 'Print the manual page (ststui(1), or a verb''s: `ststui man rollout | man -l -`), or write every page into a folder (--out-dir)'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'ststui;help;sim'= {
        }
        &'ststui;help;explain'= {
        }
        &'ststui;help;step'= {
        }
        &'ststui;help;freeze'= {
        }
        &'ststui;help;resume'= {
        }
        &'ststui;help;wait'= {
        }
        &'ststui;help;rollout'= {
        }
        &'ststui;help;approve'= {
        }
        &'ststui;help;abort'= {
        }
        &'ststui;help;play'= {
        }
        &'ststui;help;drive'= {
        }
        &'ststui;help;fake-kubelet'= {
        }
        &'ststui;help;completion'= {
        }
        &'ststui;help;man'= {
        }
        &'ststui;help;help'= {
        }
    ]
    $completions[$command]
}
