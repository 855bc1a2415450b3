# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_ststui_global_optspecs
    string join \n kubeconfig= context= n/namespace= A/all-namespaces read-only drive log-file= feature-gates= contexts= l/selector= h/help V/version
end

function __fish_ststui_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_ststui_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_ststui_using_subcommand
    set -l cmd (__fish_ststui_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c ststui -n "__fish_ststui_needs_command" -l kubeconfig -d 'Kubeconfig file (real-cluster mode and the verbs)' -r -F
complete -c ststui -n "__fish_ststui_needs_command" -l context -d 'Kubeconfig context (real-cluster mode and the verbs)' -r
complete -c ststui -n "__fish_ststui_needs_command" -s n -l namespace -d 'Namespace (real-cluster mode and the verbs; default: the context\'s namespace)' -r
complete -c ststui -n "__fish_ststui_needs_command" -l log-file -d 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)' -r -F
complete -c ststui -n "__fish_ststui_needs_command" -l feature-gates -d 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager\'s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults' -r
complete -c ststui -n "__fish_ststui_needs_command" -l contexts -d 'A fleet\'s view: NAME (or the sets -l selects) in each of these kubeconfig contexts, side by side as one matrix, read-only (`ststui rollout … --contexts` rolls a fleet)' -r
complete -c ststui -n "__fish_ststui_needs_command" -s l -l selector -d 'With --contexts: the sets this label selector lists in each cluster (a group in each), e.g. -l rollout-group=ingester' -r
complete -c ststui -n "__fish_ststui_needs_command" -s A -l all-namespaces -d 'Every namespace\'s StatefulSets in the list (real-cluster mode)'
complete -c ststui -n "__fish_ststui_needs_command" -l read-only -d 'Make no writes to the cluster at all (real-cluster mode): watch and explain only'
complete -c ststui -n "__fish_ststui_needs_command" -l drive -d 'Be the StatefulSet controller: ststui\'s core reconciles the namespace\'s sets (or NAME only), with pause and step. Only where kube-controller-manager runs without its StatefulSet controller (--controllers=*,-statefulset-controller); refused, or stopped at once, when another controller is seen at work'
complete -c ststui -n "__fish_ststui_needs_command" -s h -l help -d 'Print help'
complete -c ststui -n "__fish_ststui_needs_command" -s V -l version -d 'Print version'
complete -c ststui -n "__fish_ststui_needs_command" -a "sim" -d 'Run against the embedded simulated cluster (no Kubernetes needed)'
complete -c ststui -n "__fish_ststui_needs_command" -a "explain" -d 'Print what the console shows about a set: grid, revisions, health, the controller\'s next action and blocker, and kubectl\'s verdict beside ours'
complete -c ststui -n "__fish_ststui_needs_command" -a "step" -d 'Lower the partition by one (or to N): the next ordinals of a canary roll out'
complete -c ststui -n "__fish_ststui_needs_command" -a "freeze" -d 'Hold the rollout: partition to replicas, recording the previous partition, who and when'
complete -c ststui -n "__fish_ststui_needs_command" -a "resume" -d 'Undo a freeze: the recorded partition comes back (refused when another writer moved it since, unless --force)'
complete -c ststui -n "__fish_ststui_needs_command" -a "wait" -d 'Wait for a rollout, partition-aware (and plan-aware: a plan under way is waited for): 0 done, 1 timeout, 3 stuck (naming pod and rule)'
complete -c ststui -n "__fish_ststui_needs_command" -a "rollout" -d 'Run a rollout plan: open the update step by step (counts or percentages of replicas), each gated on its pods being updated, Ready and available, a bake and your checks; halt on anything wrong. The plan is recorded on the set: a rerun resumes it'
complete -c ststui -n "__fish_ststui_needs_command" -a "approve" -d 'Pass a plan\'s manual gate (a `pause` step)'
complete -c ststui -n "__fish_ststui_needs_command" -a "abort" -d 'The forced rollback: the template back to the previous revision and the pods stuck on the broken one deleted (a plan under way is halted first). Shows what it will do first'
complete -c ststui -n "__fish_ststui_needs_command" -a "play" -d 'Play a scenario script against a cluster in real time, printing the timeline'
complete -c ststui -n "__fish_ststui_needs_command" -a "drive" -d 'Be the StatefulSet controller with no terminal (in the cluster, or beside it): the namespace\'s sets (-n NS, several comma-separated, or -A every namespace) reconciled by ststui\'s core, one driver at a time (a Lease per namespace), JSON lines on stdout, /healthz and /readyz, SIGTERM gives the leases up. Only where kube-controller-manager runs without its StatefulSet controller'
complete -c ststui -n "__fish_ststui_needs_command" -a "fake-kubelet" -d 'A stand-in kubelet for test clusters without nodes (binds and runs every unscheduled pod; obeys the scenario\'s kubelet settings and faults). Never on a real cluster'
complete -c ststui -n "__fish_ststui_needs_command" -a "completion" -d 'Print a shell completion script (bash, zsh, fish, elvish or powershell)'
complete -c ststui -n "__fish_ststui_needs_command" -a "man" -d 'Print the manual page (ststui(1), or a verb\'s: `ststui man rollout | man -l -`), or write every page into a folder (--out-dir)'
complete -c ststui -n "__fish_ststui_needs_command" -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c ststui -n "__fish_ststui_using_subcommand sim" -l script -d 'A scenario file to play (headless: to its end on virtual time; interactive: in real time)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand sim" -l format -d 'Timeline format for --headless' -r -f -a "text\t''
jsonl\t''"
complete -c ststui -n "__fish_ststui_using_subcommand sim" -l seed -d 'Seed for all randomness (soak and faults). Same script and seed, same timeline' -r
complete -c ststui -n "__fish_ststui_using_subcommand sim" -s f -l filename -d 'Create the StatefulSets of a Kubernetes manifest (multi-document YAML). Repeatable' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand sim" -l speed -d 'Virtual seconds per wall second in the interactive console (and while serving)' -r
complete -c ststui -n "__fish_ststui_using_subcommand sim" -l serve -d 'Serve the simulated cluster as a Kubernetes API on this loopback address (plain HTTP, no authentication; e.g. 127.0.0.1:6443, port 0 picks a free one)' -r
complete -c ststui -n "__fish_ststui_using_subcommand sim" -l write-kubeconfig -d 'With --serve: write a kubeconfig for it to FILE (context ststui-sim)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand sim" -l clusters -d 'With --serve --headless: serve several simulated clusters, one per name, each its own API on its own port (ADDR\'s port and the next ones; port 0 picks free ones) with its own copy of the scenario; --write-kubeconfig then writes a context per cluster. E.g. eu,us,ap, to rehearse a fleet (`ststui rollout NAME --contexts eu,us,ap`)' -r
complete -c ststui -n "__fish_ststui_using_subcommand sim" -l deny -d 'With --serve: refuse this permission with 403 Forbidden (VERB:RESOURCE, e.g. patch:statefulsets, patch:statefulsets/scale, delete:pods). Repeatable' -r
complete -c ststui -n "__fish_ststui_using_subcommand sim" -l soak -d 'Run N randomized soak scenarios, checking invariants after every event' -r
complete -c ststui -n "__fish_ststui_using_subcommand sim" -l kube-version -d 'Upstream controller semantics to reproduce (1.31 to 1.37)' -r
complete -c ststui -n "__fish_ststui_using_subcommand sim" -l kubeconfig -d 'Kubeconfig file (real-cluster mode and the verbs)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand sim" -l context -d 'Kubeconfig context (real-cluster mode and the verbs)' -r
complete -c ststui -n "__fish_ststui_using_subcommand sim" -s n -l namespace -d 'Namespace (real-cluster mode and the verbs; default: the context\'s namespace)' -r
complete -c ststui -n "__fish_ststui_using_subcommand sim" -l log-file -d 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand sim" -l feature-gates -d 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager\'s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults' -r
complete -c ststui -n "__fish_ststui_using_subcommand sim" -l headless -d 'No terminal UI: run the script (or the manifests) and print the timeline on stdout; with --serve, serve until SIGINT/SIGTERM'
complete -c ststui -n "__fish_ststui_using_subcommand sim" -s h -l help -d 'Print help'
complete -c ststui -n "__fish_ststui_using_subcommand explain" -s o -l output -d 'Output: text for people; json or yaml for programs (documented in docs/verbs.md, versioned)' -r -f -a "text\t''
json\t''
yaml\t''"
complete -c ststui -n "__fish_ststui_using_subcommand explain" -l timeout -d 'Give up after this long, e.g. 90s (an unreachable or failing server is retried until then)' -r
complete -c ststui -n "__fish_ststui_using_subcommand explain" -l kubeconfig -d 'Kubeconfig file (real-cluster mode and the verbs)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand explain" -l context -d 'Kubeconfig context (real-cluster mode and the verbs)' -r
complete -c ststui -n "__fish_ststui_using_subcommand explain" -s n -l namespace -d 'Namespace (real-cluster mode and the verbs; default: the context\'s namespace)' -r
complete -c ststui -n "__fish_ststui_using_subcommand explain" -l log-file -d 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand explain" -l feature-gates -d 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager\'s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults' -r
complete -c ststui -n "__fish_ststui_using_subcommand explain" -s h -l help -d 'Print help'
complete -c ststui -n "__fish_ststui_using_subcommand step" -l to -d 'Set the partition to N instead of lowering it by one (above the partition now: only with --force)' -r
complete -c ststui -n "__fish_ststui_using_subcommand step" -l timeout -d 'Give up after this long (exit 1), e.g. 90s, 10m: the first view, the write and its read-back, and with --wait the wait (default: 30s, no limit on the wait)' -r
complete -c ststui -n "__fish_ststui_using_subcommand step" -l stuck-after -d 'With --wait: stuck (exit 3) after this long without progress' -r
complete -c ststui -n "__fish_ststui_using_subcommand step" -l kubeconfig -d 'Kubeconfig file (real-cluster mode and the verbs)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand step" -l context -d 'Kubeconfig context (real-cluster mode and the verbs)' -r
complete -c ststui -n "__fish_ststui_using_subcommand step" -s n -l namespace -d 'Namespace (real-cluster mode and the verbs; default: the context\'s namespace)' -r
complete -c ststui -n "__fish_ststui_using_subcommand step" -l log-file -d 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand step" -l feature-gates -d 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager\'s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults' -r
complete -c ststui -n "__fish_ststui_using_subcommand step" -l force -d 'Step even while ordinals already open are not updated and Ready, or while a rollout group\'s plan has the set waiting or rolling, or raise the partition with --to'
complete -c ststui -n "__fish_ststui_using_subcommand step" -l wait -d 'Then wait for the newly opened ordinals to be updated and Ready'
complete -c ststui -n "__fish_ststui_using_subcommand step" -s h -l help -d 'Print help'
complete -c ststui -n "__fish_ststui_using_subcommand freeze" -l timeout -d 'Give up after this long, e.g. 90s (a lost reply is read back until then)' -r
complete -c ststui -n "__fish_ststui_using_subcommand freeze" -l kubeconfig -d 'Kubeconfig file (real-cluster mode and the verbs)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand freeze" -l context -d 'Kubeconfig context (real-cluster mode and the verbs)' -r
complete -c ststui -n "__fish_ststui_using_subcommand freeze" -s n -l namespace -d 'Namespace (real-cluster mode and the verbs; default: the context\'s namespace)' -r
complete -c ststui -n "__fish_ststui_using_subcommand freeze" -l log-file -d 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand freeze" -l feature-gates -d 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager\'s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults' -r
complete -c ststui -n "__fish_ststui_using_subcommand freeze" -s h -l help -d 'Print help'
complete -c ststui -n "__fish_ststui_using_subcommand resume" -l timeout -d 'Give up after this long, e.g. 90s (a lost reply is read back until then)' -r
complete -c ststui -n "__fish_ststui_using_subcommand resume" -l kubeconfig -d 'Kubeconfig file (real-cluster mode and the verbs)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand resume" -l context -d 'Kubeconfig context (real-cluster mode and the verbs)' -r
complete -c ststui -n "__fish_ststui_using_subcommand resume" -s n -l namespace -d 'Namespace (real-cluster mode and the verbs; default: the context\'s namespace)' -r
complete -c ststui -n "__fish_ststui_using_subcommand resume" -l log-file -d 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand resume" -l feature-gates -d 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager\'s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults' -r
complete -c ststui -n "__fish_ststui_using_subcommand resume" -l force -d 'Resume although another writer moved the partition since the freeze (writing the recorded partition over theirs), or drop a freeze whose record is not a partition'
complete -c ststui -n "__fish_ststui_using_subcommand resume" -s h -l help -d 'Print help'
complete -c ststui -n "__fish_ststui_using_subcommand wait" -l timeout -d 'Give up after this long (exit 1), e.g. 90s, 10m; default: no limit' -r
complete -c ststui -n "__fish_ststui_using_subcommand wait" -l stuck-after -d 'Stuck (exit 3) after this long without progress' -r
complete -c ststui -n "__fish_ststui_using_subcommand wait" -l kubeconfig -d 'Kubeconfig file (real-cluster mode and the verbs)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand wait" -l context -d 'Kubeconfig context (real-cluster mode and the verbs)' -r
complete -c ststui -n "__fish_ststui_using_subcommand wait" -s n -l namespace -d 'Namespace (real-cluster mode and the verbs; default: the context\'s namespace)' -r
complete -c ststui -n "__fish_ststui_using_subcommand wait" -l log-file -d 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand wait" -l feature-gates -d 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager\'s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults' -r
complete -c ststui -n "__fish_ststui_using_subcommand wait" -l full -d 'Wait until every pod runs the update revision, whatever the partition (without it, a partition or OnDelete holding pods on an older revision is done as the spec asks: exit 0, "held: …")'
complete -c ststui -n "__fish_ststui_using_subcommand wait" -s h -l help -d 'Print help'
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l group -d 'Roll a group of sets one at a time (zones, racks, tiers): their names in rolling order (a,b,c), or a shell pattern (ingester-zone-*: alphabetical). Each set runs the plan; a set starts only when every pod of every set of the group is updated or untouched, Ready and available' -r
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -s l -l selector -d 'Roll the sets this label selector lists as a group, alphabetical (-l rollout-group=ingester: grafana/rollout-operator\'s groups are shown, never driven)' -r
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l order -d 'A group\'s order: `alphabetical`, or tiers (fe,be: a set rolls with the first tier its name contains as a dash-separated word)' -r
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l zone-bake -d 'In a group: every pod of the group stays updated or untouched, Ready and available this long after a set is done before the next starts, e.g. 10m' -r
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l contexts -d 'A fleet: roll NAME (or the group -l/--group picks in each cluster) in each of these kubeconfig contexts, one cluster at a time, in the order given (a cluster starts once the one before is done by revision: every pod on the update revision, Ready and available, the spec observed)' -r
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l cluster-bake -d 'In a fleet: every pod of the clusters done stays updated, Ready and available this long before the next cluster starts, e.g. 30m (--zone-bake: between a group\'s sets within a cluster)' -r
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l batches -d 'In a group, instead of --steps: each set opens these batches of pods, the last repeated (1,2,4 opens 1, then 2 more, then 4 more at a time), then the rest' -r
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l steps -d 'Pods on the update revision after each step, from the highest ordinal down: counts, percentages of the replicas (rounded up, never all before 100%) or `pause` (a manual gate), e.g. 1,25%,pause,50%,100%. Needed for a new plan; a rerun resumes the recorded one' -r
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l bake -d 'After a step\'s pods are updated, Ready and available, every pod of the set must stay Ready and restart nothing for this long, e.g. 2m (at most 24h). A resume states it again: a recorded bake is never taken from the set' -r
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l check -d 'A command run after each step\'s bake (`sh -c`), with STSTUI_NAMESPACE, STSTUI_SET, STSTUI_STEP, STSTUI_STEPS, STSTUI_PARTITION, STSTUI_PODS and STSTUI_BAKE set; a non-zero exit halts the plan. Repeatable. Only this command\'s checks ever run: a resume whose record lists others is refused without --force' -r
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l check-timeout -d 'A check running longer is killed and fails' -r
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l stuck-after -d 'A step that makes no progress for this long (no pod of it created on the update revision or turning Ready) halts the plan' -r
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l timeout -d 'Give up after this long (exit 1; the plan stays recorded where it is, a rerun resumes)' -r
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l on-failure -d 'On a failure: hold the partition where it is, or undo (the template back to the previous revision, the step\'s stuck pods deleted)' -r -f -a "hold\t''
undo\t''"
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -s o -l output -d 'Progress as text lines or JSON lines' -r -f -a "text\t''
json\t''"
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l image -d 'First hold the set (every set of a group: freeze it, unless held already) and set its image — `app=nginx:1.26` or `nginx:1.26` (the first container) — then run the plan: one command instead of three. A Recreate set cannot be held: its plan sets the image itself, once the step\'s gates passed' -r
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l max-restarts -d 'A pod of the step whose containers restart this many times halts the plan at once (a crash-looping canary fails fast instead of after --stuck-after)' -r
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l pre-delete -d 'A gate run before each pod goes (OnDelete: before ststui evicts it; RollingUpdate: before the partition is lowered onto it, one ordinal at a time): cmd:COMMAND (here, `sh -c`), exec:CONTAINER -- COMMAND… (in the pod) or http::PORT/PATH (through the API server\'s pod proxy). Exit 0 / 2xx goes, exit 75 / HTTP 503 or 429 is "not yet", anything else halts. Placeholders {namespace} {set} {pod} {ordinal} {zone} {old} {new} {step}, also in STSTUI_* variables' -r
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l post-ready -d 'A gate run once a replaced pod is updated, Ready and available, before the next goes' -r
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l before-step -d 'A whole-cluster gate run before each step\'s pods start to go (and again after --recheck)' -r
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l recheck -d 'Ask --before-step again this long after it passed, e.g. 22s (0s: once)' -r
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l gate-interval -d 'A gate that says "not yet" is asked again after this long' -r
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l gate-timeout -d 'One gate run longer than this is killed and fails' -r
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l gate-tries -d 'How many "not yet"s a gate may answer before the plan halts (with the 10s interval, 180 is 30 minutes: longer than a broker\'s recovery)' -r
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l last -d 'OnDelete: roll this pod last in its step (the primary, the active controller)' -r
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l last-by -d 'OnDelete: a gate whose first output line names the pod to roll last (asked again before each pod goes: leadership moves)' -r
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l kubeconfig -d 'Kubeconfig file (real-cluster mode and the verbs)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l context -d 'Kubeconfig context (real-cluster mode and the verbs)' -r
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -s n -l namespace -d 'Namespace (real-cluster mode and the verbs; default: the context\'s namespace)' -r
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l log-file -d 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l feature-gates -d 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager\'s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults' -r
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l approve-between -d 'In a fleet: before each next cluster starts, wait for `ststui approve` (on its first set, in its context) — the runner says the command'
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l continue -d 'Go on past a halt from the halted step (once what halted it is fixed), with this command\'s bake, checks and failure policy'
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l force -d 'Go on although the recorded plan differs from this command (this command\'s steps, bake, checks and policy win and are recorded), start a plan over an invalid record, take over a lease that claims more than any runner writes, or take a set carrying another group\'s part into this group'
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l wait-lease -d 'While another runner\'s lease holds, wait for it to run out instead of refusing'
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -l replace-stuck -d 'Replace a step\'s pods stuck broken on an older revision (CrashLoopBackOff, ImagePullBackOff, CreateContainerError…) first, at once and without their pre-delete gate: they serve nothing, so it costs no availability. Without it they are only named'
complete -c ststui -n "__fish_ststui_using_subcommand rollout" -s h -l help -d 'Print help'
complete -c ststui -n "__fish_ststui_using_subcommand approve" -l timeout -d 'Give up after this long, e.g. 90s (a lost reply is read back until then)' -r
complete -c ststui -n "__fish_ststui_using_subcommand approve" -l kubeconfig -d 'Kubeconfig file (real-cluster mode and the verbs)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand approve" -l context -d 'Kubeconfig context (real-cluster mode and the verbs)' -r
complete -c ststui -n "__fish_ststui_using_subcommand approve" -s n -l namespace -d 'Namespace (real-cluster mode and the verbs; default: the context\'s namespace)' -r
complete -c ststui -n "__fish_ststui_using_subcommand approve" -l log-file -d 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand approve" -l feature-gates -d 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager\'s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults' -r
complete -c ststui -n "__fish_ststui_using_subcommand approve" -s h -l help -d 'Print help'
complete -c ststui -n "__fish_ststui_using_subcommand abort" -l force-delete -d 'Delete a stuck pod its disruption budget will not let go (the eviction refused), giving the reason; recorded on the set (ststui.io/force-deleted) and said' -r
complete -c ststui -n "__fish_ststui_using_subcommand abort" -l contexts -d 'NAME is in a fleet: revert every cluster its plan touched, newest first (name the fleet\'s contexts, in any order: the clusters are matched by identity)' -r
complete -c ststui -n "__fish_ststui_using_subcommand abort" -l timeout -d 'Give up after this long, e.g. 90s' -r
complete -c ststui -n "__fish_ststui_using_subcommand abort" -l kubeconfig -d 'Kubeconfig file (real-cluster mode and the verbs)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand abort" -l context -d 'Kubeconfig context (real-cluster mode and the verbs)' -r
complete -c ststui -n "__fish_ststui_using_subcommand abort" -s n -l namespace -d 'Namespace (real-cluster mode and the verbs; default: the context\'s namespace)' -r
complete -c ststui -n "__fish_ststui_using_subcommand abort" -l log-file -d 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand abort" -l feature-gates -d 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager\'s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults' -r
complete -c ststui -n "__fish_ststui_using_subcommand abort" -l yes -d 'Do it without asking (needed without a terminal)'
complete -c ststui -n "__fish_ststui_using_subcommand abort" -l group -d 'NAME is in a rollout group: revert the group instead (every set its plan touched, newest first). Without it, only NAME is reverted'
complete -c ststui -n "__fish_ststui_using_subcommand abort" -s h -l help -d 'Print help'
complete -c ststui -n "__fish_ststui_using_subcommand play" -l format -d 'Timeline format on stdout' -r -f -a "text\t''
jsonl\t''"
complete -c ststui -n "__fish_ststui_using_subcommand play" -l timeout -d 'How long an unreachable or failing server, and the first listings, are waited for before exit 4, e.g. 90s' -r
complete -c ststui -n "__fish_ststui_using_subcommand play" -l kubeconfig -d 'Kubeconfig file (real-cluster mode and the verbs)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand play" -l context -d 'Kubeconfig context (real-cluster mode and the verbs)' -r
complete -c ststui -n "__fish_ststui_using_subcommand play" -s n -l namespace -d 'Namespace (real-cluster mode and the verbs; default: the context\'s namespace)' -r
complete -c ststui -n "__fish_ststui_using_subcommand play" -l log-file -d 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand play" -l feature-gates -d 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager\'s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults' -r
complete -c ststui -n "__fish_ststui_using_subcommand play" -l drive -d 'ststui\'s own controller drives the namespace\'s StatefulSets (only on an API server whose kube-controller-manager runs without its StatefulSet controller); `pause`, `resume` and `step` may then be played'
complete -c ststui -n "__fish_ststui_using_subcommand play" -s h -l help -d 'Print help'
complete -c ststui -n "__fish_ststui_using_subcommand drive" -l health-addr -d 'Where /healthz (the election loops go round) and /readyz (every lease held) answer; the default is a free loopback port, said in the `start` record' -r
complete -c ststui -n "__fish_ststui_using_subcommand drive" -l kubeconfig -d 'Kubeconfig file (real-cluster mode and the verbs)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand drive" -l context -d 'Kubeconfig context (real-cluster mode and the verbs)' -r
complete -c ststui -n "__fish_ststui_using_subcommand drive" -s n -l namespace -d 'Namespace (real-cluster mode and the verbs; default: the context\'s namespace)' -r
complete -c ststui -n "__fish_ststui_using_subcommand drive" -l log-file -d 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand drive" -l feature-gates -d 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager\'s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults' -r
complete -c ststui -n "__fish_ststui_using_subcommand drive" -s A -l all-namespaces -d 'Every namespace, found by a watch (a new one is driven once seen); not with -n'
complete -c ststui -n "__fish_ststui_using_subcommand drive" -s h -l help -d 'Print help'
complete -c ststui -n "__fish_ststui_using_subcommand fake-kubelet" -l node -d 'The Node to register and serve' -r
complete -c ststui -n "__fish_ststui_using_subcommand fake-kubelet" -l exec-port -d 'Serve the kubelet\'s exec endpoint over HTTPS on this loopback port (0: any free one), declared in the node\'s status so kube-apiserver proxies `kubectl exec` and `exec:` gates to it. The command runs nothing: it answers exit 0 while the pod is Ready, 75 otherwise' -r
complete -c ststui -n "__fish_ststui_using_subcommand fake-kubelet" -l tls-cert -d 'The endpoint\'s certificate (PEM; self-signed will do: the API server verifies a kubelet only when given --kubelet-certificate-authority)' -r
complete -c ststui -n "__fish_ststui_using_subcommand fake-kubelet" -l tls-key -d 'The endpoint\'s private key (PEM)' -r
complete -c ststui -n "__fish_ststui_using_subcommand fake-kubelet" -l kubeconfig -d 'Kubeconfig file (real-cluster mode and the verbs)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand fake-kubelet" -l context -d 'Kubeconfig context (real-cluster mode and the verbs)' -r
complete -c ststui -n "__fish_ststui_using_subcommand fake-kubelet" -s n -l namespace -d 'Namespace (real-cluster mode and the verbs; default: the context\'s namespace)' -r
complete -c ststui -n "__fish_ststui_using_subcommand fake-kubelet" -l log-file -d 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand fake-kubelet" -l feature-gates -d 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager\'s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults' -r
complete -c ststui -n "__fish_ststui_using_subcommand fake-kubelet" -s h -l help -d 'Print help'
complete -c ststui -n "__fish_ststui_using_subcommand completion" -l kubeconfig -d 'Kubeconfig file (real-cluster mode and the verbs)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand completion" -l context -d 'Kubeconfig context (real-cluster mode and the verbs)' -r
complete -c ststui -n "__fish_ststui_using_subcommand completion" -s n -l namespace -d 'Namespace (real-cluster mode and the verbs; default: the context\'s namespace)' -r
complete -c ststui -n "__fish_ststui_using_subcommand completion" -l log-file -d 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand completion" -l feature-gates -d 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager\'s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults' -r
complete -c ststui -n "__fish_ststui_using_subcommand completion" -s h -l help -d 'Print help'
complete -c ststui -n "__fish_ststui_using_subcommand man" -l out-dir -d 'Write every page (ststui.1, ststui-VERB.1, …) into this folder instead, e.g. /usr/local/share/man/man1' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand man" -l kubeconfig -d 'Kubeconfig file (real-cluster mode and the verbs)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand man" -l context -d 'Kubeconfig context (real-cluster mode and the verbs)' -r
complete -c ststui -n "__fish_ststui_using_subcommand man" -s n -l namespace -d 'Namespace (real-cluster mode and the verbs; default: the context\'s namespace)' -r
complete -c ststui -n "__fish_ststui_using_subcommand man" -l log-file -d 'Write logs to this file (default: $XDG_STATE_HOME/ststui/ststui.log, or ~/.local/state/ststui/ststui.log)' -r -F
complete -c ststui -n "__fish_ststui_using_subcommand man" -l feature-gates -d 'Feature gates of the controller ststui plays when it drives (--drive, `ststui drive`, `play --drive`) or simulates (`sim`: its API server too), in kube-controller-manager\'s syntax: NAME=true|false, comma-separated, NAME MaxUnavailableStatefulSet, StaleControllerConsistencyStatefulSet or StatefulSetRecreateStrategy (1.37). The release sets the defaults' -r
complete -c ststui -n "__fish_ststui_using_subcommand man" -s h -l help -d 'Print help'
complete -c ststui -n "__fish_ststui_using_subcommand help; and not __fish_seen_subcommand_from sim explain step freeze resume wait rollout approve abort play drive fake-kubelet completion man help" -f -a "sim" -d 'Run against the embedded simulated cluster (no Kubernetes needed)'
complete -c ststui -n "__fish_ststui_using_subcommand help; and not __fish_seen_subcommand_from sim explain step freeze resume wait rollout approve abort play drive fake-kubelet completion man help" -f -a "explain" -d 'Print what the console shows about a set: grid, revisions, health, the controller\'s next action and blocker, and kubectl\'s verdict beside ours'
complete -c ststui -n "__fish_ststui_using_subcommand help; and not __fish_seen_subcommand_from sim explain step freeze resume wait rollout approve abort play drive fake-kubelet completion man help" -f -a "step" -d 'Lower the partition by one (or to N): the next ordinals of a canary roll out'
complete -c ststui -n "__fish_ststui_using_subcommand help; and not __fish_seen_subcommand_from sim explain step freeze resume wait rollout approve abort play drive fake-kubelet completion man help" -f -a "freeze" -d 'Hold the rollout: partition to replicas, recording the previous partition, who and when'
complete -c ststui -n "__fish_ststui_using_subcommand help; and not __fish_seen_subcommand_from sim explain step freeze resume wait rollout approve abort play drive fake-kubelet completion man help" -f -a "resume" -d 'Undo a freeze: the recorded partition comes back (refused when another writer moved it since, unless --force)'
complete -c ststui -n "__fish_ststui_using_subcommand help; and not __fish_seen_subcommand_from sim explain step freeze resume wait rollout approve abort play drive fake-kubelet completion man help" -f -a "wait" -d 'Wait for a rollout, partition-aware (and plan-aware: a plan under way is waited for): 0 done, 1 timeout, 3 stuck (naming pod and rule)'
complete -c ststui -n "__fish_ststui_using_subcommand help; and not __fish_seen_subcommand_from sim explain step freeze resume wait rollout approve abort play drive fake-kubelet completion man help" -f -a "rollout" -d 'Run a rollout plan: open the update step by step (counts or percentages of replicas), each gated on its pods being updated, Ready and available, a bake and your checks; halt on anything wrong. The plan is recorded on the set: a rerun resumes it'
complete -c ststui -n "__fish_ststui_using_subcommand help; and not __fish_seen_subcommand_from sim explain step freeze resume wait rollout approve abort play drive fake-kubelet completion man help" -f -a "approve" -d 'Pass a plan\'s manual gate (a `pause` step)'
complete -c ststui -n "__fish_ststui_using_subcommand help; and not __fish_seen_subcommand_from sim explain step freeze resume wait rollout approve abort play drive fake-kubelet completion man help" -f -a "abort" -d 'The forced rollback: the template back to the previous revision and the pods stuck on the broken one deleted (a plan under way is halted first). Shows what it will do first'
complete -c ststui -n "__fish_ststui_using_subcommand help; and not __fish_seen_subcommand_from sim explain step freeze resume wait rollout approve abort play drive fake-kubelet completion man help" -f -a "play" -d 'Play a scenario script against a cluster in real time, printing the timeline'
complete -c ststui -n "__fish_ststui_using_subcommand help; and not __fish_seen_subcommand_from sim explain step freeze resume wait rollout approve abort play drive fake-kubelet completion man help" -f -a "drive" -d 'Be the StatefulSet controller with no terminal (in the cluster, or beside it): the namespace\'s sets (-n NS, several comma-separated, or -A every namespace) reconciled by ststui\'s core, one driver at a time (a Lease per namespace), JSON lines on stdout, /healthz and /readyz, SIGTERM gives the leases up. Only where kube-controller-manager runs without its StatefulSet controller'
complete -c ststui -n "__fish_ststui_using_subcommand help; and not __fish_seen_subcommand_from sim explain step freeze resume wait rollout approve abort play drive fake-kubelet completion man help" -f -a "fake-kubelet" -d 'A stand-in kubelet for test clusters without nodes (binds and runs every unscheduled pod; obeys the scenario\'s kubelet settings and faults). Never on a real cluster'
complete -c ststui -n "__fish_ststui_using_subcommand help; and not __fish_seen_subcommand_from sim explain step freeze resume wait rollout approve abort play drive fake-kubelet completion man help" -f -a "completion" -d 'Print a shell completion script (bash, zsh, fish, elvish or powershell)'
complete -c ststui -n "__fish_ststui_using_subcommand help; and not __fish_seen_subcommand_from sim explain step freeze resume wait rollout approve abort play drive fake-kubelet completion man help" -f -a "man" -d 'Print the manual page (ststui(1), or a verb\'s: `ststui man rollout | man -l -`), or write every page into a folder (--out-dir)'
complete -c ststui -n "__fish_ststui_using_subcommand help; and not __fish_seen_subcommand_from sim explain step freeze resume wait rollout approve abort play drive fake-kubelet completion man help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
