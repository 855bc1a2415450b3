//! Every scenario command's usage line: the parser's errors quote the one of the command they
//! refuse.

/// Every command with its usage, as shown in error messages.
pub const USAGE: &[(&str, &str)] = &[
    (
        "create",
        "create NAME [replicas=N] [image=IMG] [policy=OrderedReady|Parallel] \
         [strategy=RollingUpdate|OnDelete|Recreate] [partition=N] [maxUnavailable=N|P%] \
         [minReadySeconds=N] [startOrdinal=N] [claims=a,b] [historyLimit=N] \
         [whenDeleted=Retain|Delete] [whenScaled=Retain|Delete] [labels=k=v,…]",
    ),
    ("apply", "apply FILE"),
    ("image", "image NAME IMG"),
    ("scale", "scale NAME N"),
    ("partition", "partition NAME N"),
    ("strategy", "strategy NAME RollingUpdate|OnDelete|Recreate"),
    ("maxunavailable", "maxunavailable NAME N|P%"),
    ("undo", "undo NAME [REVISION]"),
    ("restart", "restart NAME"),
    ("delete", "delete NAME [cascade=background|orphan]"),
    ("delete-pod", "delete-pod POD"),
    ("force-delete-pod", "force-delete-pod POD"),
    ("evict", "evict POD"),
    (
        "pdb",
        "pdb NAME min-available=N|P% | max-unavailable=N|P% [set=SET] \
         [unhealthy=IfHealthyBudget|AlwaysAllow]",
    ),
    ("delete-pdb", "delete-pdb NAME"),
    ("fail", "fail POD"),
    ("unready", "unready POD"),
    ("ready", "ready POD"),
    (
        "kubelet",
        "kubelet [start=DUR] [ready=DUR] [stop=DUR] [broken=IMG] [failure=probe|pull|crash]",
    ),
    ("gc", "gc delay=DUR"),
    ("break-image", "break-image IMG [failure=probe|pull|crash]"),
    ("fix-image", "fix-image IMG"),
    ("break-storage", "break-storage"),
    ("fix-storage", "fix-storage"),
    ("quota", "quota pods=N [namespace=NS] | quota off [namespace=NS]"),
    ("freeze", "freeze NAME"),
    ("unfreeze", "unfreeze NAME"),
    (
        "rollout",
        "rollout NAME steps=LIST [bake=DUR] [stuck-after=DUR] [on-failure=hold|undo] \
         [gates=pre-delete,post-ready,before-step,last-by] [last=POD] [recheck=DUR] \
         [gate-interval=DUR] [gate-tries=N] [replace-stuck=true|false] | rollout group=NAME \
         steps=LIST [zone-bake=DUR] [order=TIER,…] …",
    ),
    (
        "gate",
        "gate NAME pre-delete|post-ready|before-step|last-by [fail] [slow=DUR] [not-yet=N] [leader=POD] [pass]",
    ),
    ("approve", "approve NAME"),
    ("abort", "abort NAME"),
    ("api-down", "api-down DUR"),
    ("api-latency", "api-latency DUR"),
    ("api-unauthorized", "api-unauthorized DUR"),
    ("drop-watches", "drop-watches"),
    ("compact", "compact"),
    ("api-lose-replies", "api-lose-replies N"),
    ("api-stall-watches", "api-stall-watches DUR"),
    ("api-errors", "api-errors N"),
    ("pause", "pause"),
    ("resume", "resume"),
    ("step", "step [N]"),
    ("wait", "wait DUR"),
    ("settle", "settle [max=DUR]"),
    (
        "expect",
        "expect NAME key=value ... (keys: replicas ready available current updated \
         rolledOut pods blocked claims partition plan)",
    ),
];
