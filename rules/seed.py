#!/usr/bin/env python3
"""Regenerates the upstream part of rules/secrets.yaml from Titus's rule set (Apache-2.0).

Usage: python3 rules/seed.py TITUS_RULES_JSON > rules/upstream.yaml
       python3 rules/seed.py --append TITUS_RULES_JSON >> rules/upstream.yaml

`--append` writes every Titus rule that upstream.yaml does not hold yet, except the rules in
NOT_SECRETS (identifiers, not secrets; rules/README.md says why), so tracebook's edits to the
rules already there are kept.

Keeps the rules for credentials that coding-agent logs carry (AI providers, VCS hosts, clouds,
package registries, chat webhooks, payments, databases, private keys, JWTs), drops rules that
find identifiers rather than secrets, and derives each rule's prefilter keywords from the
literal text every match must contain.
"""
import json, re, sys
import re._parser as P
import re._constants as C

WANTED = re.compile(r"anthropic|openai|azureopenai|groq|mistral|cohere|deepseek|xai|perplexity|replicate|together|fireworks|openrouter|huggingface|github|gitlab|bitbucket|atlassian|jira\.2|linear|aws|appsync|azure|gcp|google|digitalocean|heroku|cloudflare|vercel|netlify|flyio|supabase|npm|pypi|cratesio|rubygems|nuget|dockerhub|docker\.1|slack|discord|msteams|microsoftteams|telegram|stripe|square|paypal|shopify|sendgrid|twilio|mailgun|datadog\.[23]|sentry\.[123]|postgres|mysql|mongodb\.[134]|jdbc|odbc|redis|generic\.10|pem|privkey|jwt\.1|wireguard")
IDENTIFIER = re.compile(r"Client ID|Domain|Host|Bucket|Account ID|Account Name|Resource Name|Bot ID|PUBLIC Key|Organization$|Search URL|Project URL|Base64 Encoded", re.I)


def slug(name):
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def keywords(pattern):
    """A set of lowercase strings, one of which every match contains, or None."""
    try:
        tree = P.parse(pattern)
    except Exception:
        return None
    return best(list(tree))


def best(items):
    candidates, run = [], ""
    def flush():
        nonlocal run
        if len(run) >= 3:
            candidates.append({run})
        run = ""
    for op, av in items:
        if op is C.LITERAL:
            run += chr(av).lower()
            continue
        flush()
        if op is C.SUBPATTERN:
            k = best(list(av[-1]))
            if k:
                candidates.append(k)
        elif op is C.BRANCH:
            ks = [best(list(b)) for b in av[1]]
            if all(ks):
                candidates.append(set().union(*ks))
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT) and av[0] >= 1:
            k = best(list(av[2]))
            if k:
                candidates.append(k)
    flush()
    if not candidates:
        return None
    return max(candidates, key=lambda s: (min(len(x) for x in s), -len(s)))


def secret_group(pattern):
    try:
        names = list(re.compile(pattern).groupindex)
        groups = re.compile(pattern).groups
    except Exception:
        return None
    for pref in ("secret", "password", "pass", "token", "key", "cred"):
        for n in names:
            if pref in n.lower():
                return n
    return None if groups <= 1 else names[0] if names else None


# Titus rules whose matches name a thing rather than hold a secret (rules/README.md).
NOT_SECRETS = {
    "np.age.1", "np.aws.3", "np.s3.1", "np.s3.2", "np.arn.1", "kingfisher.discord.3",
    "np.firebase.2", "np.github.5", "np.google.1", "np.gcs.1", "np.gcs.2", "np.linkedin.1",
    "np.reactapp.1", "np.shopify.1", "np.twitter.1", "np.mapbox.1",
    "kingfisher.algolia.2", "kingfisher.asana.1", "kingfisher.azure.devops.1",
    "kingfisher.azureopenai.host.1", "kingfisher.azuresearch.url.1", "kingfisher.azurestorage.1a",
    "kingfisher.azurestorage.1b", "kingfisher.azurestorage.1c", "kingfisher.clojars.1",
    "kingfisher.confluent.1", "kingfisher.coveralls.1", "kingfisher.datadog.1",
    "kingfisher.foursquare.1", "kingfisher.freshdesk.1", "kingfisher.intra42.1", "kingfisher.jira.1",
    "kingfisher.launchdarkly.2", "kingfisher.lob.2", "kingfisher.looker.1", "kingfisher.looker.2",
    "kingfisher.mattermost.1", "kingfisher.maxmind.2", "kingfisher.paypal.1", "kingfisher.plaid.1",
    "kingfisher.planetscale.2", "kingfisher.posthog.1", "kingfisher.riot.1", "kingfisher.sendbird.1",
    "kingfisher.supabase.3",
}
# Prefilters for appended rules whose patterns hold no literal of three characters or more: a
# keyword list, or an anchor (a pattern every match contains; see rules/README.md).
KEYWORDS = {
    "np.adobe.1": ["p8e-"],
    "kingfisher.easypost.1": ["ezak", "eztk"],
    "np.pwhash.2": ["$2a$", "$2b$", "$2x$", "$2y$"],
    "np.pwhash.3": ["$5$"],
    "np.pwhash.4": ["$6$"],
    "np.mailchimp.1": ["-us"],
    "np.salesforce.1": ["!"],
}
ANCHORS = {
    # The two dots and the third part's shortest length: a dot is in nearly every text.
    "kingfisher.discord.2": r"(?i)\.[A-Z0-9_-]{6}\.[A-Z0-9_-]{27}",
    "kingfisher.1password.2": r"(?i)A[0-9]-[A-Z0-9]{6}-[A-Z0-9]{6}-",
    # The dot and what follows it: a pattern with a literal to look for first, where the
    # whole pattern has none.
    "kingfisher.zhipu.1": r"(?i)\.[A-Z0-9]{16}\b",
}
# Prefilter keywords that occur in nearly every text.
COMMON_WORDS = {
    "key", "api", "access", "app", "application", "private", "secret", "token", "client",
    "consumer", "customer", "message", "live", "test", "user", "username", "password", "pass",
    "auth", "session", "bearer", "http", "challenge", "bootstrap", "track", "tracking",
}
# Appended rules whose secret is another group than the one secret_group() picks (a number
# names an unnamed group).
GROUPS = {
    "np.zapier.1": ["hook_id"],
    "np.phpmailer.1": ["3"],
    "np.generic.3": ["2"], "np.generic.4": ["2"], "np.generic.7": ["2"], "np.generic.8": ["3"],
    "np.generic.9": ["2"], "np.generic.10": ["2"], "np.generic.13": ["2"], "np.generic.14": ["2"],
    "np.gitalk.1": ["2"], "np.gradle.1": ["1", "2"], "np.mongodb.1": ["2"], "np.netrc.1": ["3"],
    "np.psexec.1": ["2"], "kingfisher.zuplo.1": ["1"], "kingfisher.confluent.3": ["1"],
}
DEFECT = "does not match the rule's own pattern (upstream data defect)"
FILLER = "is filler (one character repeated), which tracebook keeps as a placeholder"
# Upstream examples an appended rule cannot find, each with the reason; the whole engine runs
# over them in tests/suite/secret_vectors.rs.
DROP_EXAMPLES = {
    "kingfisher.airtable.2": (DEFECT, ["example.v1."]),
    "np.amplitude.1": (DEFECT, ["amplitude.init("]),
    "kingfisher.contentful.1": (DEFECT, ["wJalrXUtnFEMI_K7MDENG"]),
    "kingfisher.contentful.2": (DEFECT, ["CFPAT-0JsT8FnP_qGlX2kRxYZ"]),
    "kingfisher.curl.2": (DEFECT, ["Basic YnJvd3Nlcjo="]),
    "np.cypress.1": (DEFECT, ["--record --key"]),
    "np.twitter.3": (DEFECT, ["AAAAAAAAAAAAAAAAAAAAANRILEN0"]),
    "kingfisher.filezilla.2": ("holds `Example`, which the rule's own ignore list skips", ["ExamplePas123"]),
    "kingfisher.uri.1": ("on an example.com host, which the rule's own ignore list skips", ["username:secret@example.com"]),
    "kingfisher.rabbitmq.1": ("below the rule's entropy threshold", ["user:password@", "admin:3eCa3P", "myuser:s3cretP4ss", "app:xK9!mN2$"]),
    "np.firebase.1": (FILLER, ["AAAA-ExTest", "AAAADem0Key", "AAAATe5tKey"]),
    "np.newrelic.1": (FILLER, ["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaNRAL"]),
    "kingfisher.newrelic.1": (FILLER, ["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaNRAL"]),
    "np.okta.1": (FILLER, ["00aaaaaaaaaaaa", "00-aaaaaaaaaaaaa"]),
    "np.tavily.1": (FILLER, ["tvly-xxxxxxxx"]),
    "np.vmware.1": ("a password that is a PowerShell variable, not a secret", ["$ESXipass", '"$password"']),
    "np.psexec.1": ("a password that is a PowerShell variable, not a secret", ["-p $Password"]),
}
# Examples of the same shape for rules whose upstream examples are all left out (random values).
EXTRA_EXAMPLES = {
    "kingfisher.airtable.2": ["AIRTABLE_TOKEN=PATHVDGAJ8GXB.v1.ENYJQWX4HH53.ff9243a8f506b40928b5b7a7"],
    "np.firebase.1": ['FCM_SERVER_KEY="AAAAu8jzPde:APA91bmUhBel31iEl2hpChYgCfrL1spNxnyVmihA-2O76UMFxFkM-R5Kjp1vRt_1fjORS-6ilI8ihN5KXSc7Tvo-hBKqFYY-kv5ZJr3J1TWDtkwtDDb_xHKas1VOqg6YYZYn9ZhyiA4u"'],
    "kingfisher.rabbitmq.1": ["amqps://admin:Zq8!pW3xK9vLm2Rt7@broker.internal:5671/vh"],
    "kingfisher.uri.1": ["https://deploy:Xk29vQp7LmZ3rT8w@git.internal.net/repo.git"],
}
# Upstream negative examples an appended rule finds: upstream's regex matches them too, and
# Titus rejects them only by live validation, which tracebook never does. A token of the
# vendor's shape is redacted.
DROP_NEGATIVES = {"np.grafana.1", "np.grafana.2", "np.grafana.3"}
# Appended rules some of whose own examples fall below the rule's min_entropy or character-class
# requirements: tracebook drops the filter (privacy first; the rule's keyword still gates it).
RELAX = {
    "kingfisher.ai21studio.1", "kingfisher.anypoint.1", "kingfisher.asana.2",
    "kingfisher.azure.devops.1", "kingfisher.beamer.1", "kingfisher.ciscomeraki.1",
    "kingfisher.clojars.1", "kingfisher.cloudsight.1", "kingfisher.filezilla.2",
    "kingfisher.freshbooks.1", "kingfisher.gocardless.1", "kingfisher.imagekit.1",
    "kingfisher.infracost.1", "kingfisher.ipstack.1", "kingfisher.jira.1", "kingfisher.lob.1",
    "kingfisher.lob.2", "kingfisher.mattermost.2", "kingfisher.messagebird.1",
    "kingfisher.mongodb.2", "kingfisher.openweather.1", "kingfisher.planetscale.2",
    "kingfisher.prefect.1", "kingfisher.recaptcha.1",
    "kingfisher.runway.1", "kingfisher.scalingo.1", "kingfisher.scraperapi.1",
    "kingfisher.sendbird.2", "kingfisher.shippo.1", "kingfisher.uri.1",
}
APPEND = sys.argv[1] == "--append"
if APPEND:
    sys.argv.pop(1)
UPSTREAM = open(__file__.replace("seed.py", "upstream.yaml")).read() if APPEND else ""
HAVE = set(re.findall(r"^  source: titus (\S+)", UPSTREAM, re.M))
TAKEN = set(re.findall(r"^- id: (\S+)", UPSTREAM, re.M))
data = json.load(open(sys.argv[1]))
# Ids taken by tracebook's own rules (rules/secrets.yaml): an upstream rule gets a suffix.
OWN = set(re.findall(r"^- id: (\S+)", open(__file__.replace("seed.py", "secrets.yaml")).read(), re.M))
seen = set()
out = []
for r in data["rules"]:
    if APPEND:
        if r["id"] in HAVE or r["id"] in NOT_SECRETS:
            continue
    elif not WANTED.search(r["id"]) or IDENTIFIER.search(r["name"]):
        continue
    if r["id"] in seen:
        continue
    seen.add(r["id"])
    rid = slug(r["name"])
    n = 2
    base = rid
    while rid in {o["id"] for o in out} | OWN | TAKEN:
        rid = f"{base}-{n}"
        n += 1
    rule = {"id": rid, "source": f"titus {r['id']}", "pattern": r["pattern"]}
    g = secret_group(r["pattern"])
    if g:
        rule["groups"] = [g]
    k = KEYWORDS.get(r["id"]) or keywords(r["pattern"])
    if k:
        rule["keywords"] = sorted(k)
    if r["id"] in ANCHORS:
        rule["anchor"] = ANCHORS[r["id"]]
    req = dict(r.get("pattern_requirements") or {})
    notes = []
    if req.pop("checksum", None):
        notes.append("checksum requirement dropped: a token of this shape is redacted whatever its checksum.")
    if APPEND and r["id"] in RELAX and (r.get("min_entropy") or req):
        notes.append("min_entropy and character-class requirements dropped: upstream's own examples "
                     "fall below them, and a value of this shape beside the vendor's name is redacted.")
        req = {k: v for k, v in req.items() if k == "ignore_if_contains"}
    elif r.get("min_entropy"):
        rule["min_entropy"] = r["min_entropy"]
    if req:
        rule["requires"] = req
    cats = r.get("categories") or []
    if "fuzzy" in cats or "generic" in cats:
        rule["context"] = True
    elif APPEND and k and set(k) & COMMON_WORDS:
        # Selected by a word every text has (the vendor's name is too short to select it):
        # a rule that finds a value by the vendor's name and a key word beside it, which the
        # backstop over the written page does not run.
        rule["context"] = True
    if r["id"] in GROUPS:
        rule["groups"] = GROUPS[r["id"]]
        notes.append("groups set: the secret is not the pattern's first group, or is more than one group.")
    examples = r.get("examples", [])
    negatives = r.get("negative_examples") or []
    if APPEND and r["id"] in DROP_EXAMPLES:
        why, marks = DROP_EXAMPLES[r["id"]]
        kept = [e for e in examples if not any(m in e for m in marks)]
        notes.append(f"{len(examples) - len(kept)} upstream example(s) left out: each {why}.")
        examples = kept + EXTRA_EXAMPLES.get(r["id"], [])
    if APPEND and r["id"] in DROP_NEGATIVES:
        notes.append("upstream's negative examples left out: its regex matches them too, and Titus "
                     "rejects them only by live validation, which tracebook never does.")
        negatives = []
    if notes:
        rule["note"] = " ".join(notes)
    rule["examples"] = examples
    if negatives:
        rule["negative_examples"] = negatives
    out.append(rule)

import yaml
class Lit(str): pass
def lit(d, s):
    style = "|" if "\n" in s and not s.endswith((" ", "\t")) and "\r" not in s and not re.search(r"\n[ \t]", s) else None
    return d.represent_scalar("tag:yaml.org,2002:str", s, style=style)
yaml.add_representer(str, lit)
if APPEND:
    sys.stdout.write("\n# Appended by rules/seed.py --append: the rest of Titus's rules.\n")
else:
  sys.stdout.write("# Generated by rules/seed.py from praetorian-inc/titus pkg/rule/rules (commit 369d8dc4),\n"
                   "# Apache-2.0: see rules/LICENSE-Apache-2.0.txt and rules/NOTICE-titus.txt.\n"
                   "# Patterns and examples are unchanged; ids are renamed, keywords derived.\n")
yaml.dump(out, sys.stdout, sort_keys=False, allow_unicode=True, width=100)
print(f"{len(out)} rules", file=sys.stderr)
