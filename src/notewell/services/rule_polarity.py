"""Whether two rules may say different things where a sentence model sees the same: the guard that keeps
semantic dedup from merging a rule with its opposite.

A sentence model places "Freeze the clock in pricing tests" and "Never freeze the clock in pricing tests" at
cosine 0.98: the words are the same but one. Merged, the correction would reinforce the very rule it was meant
to replace, and the new rule would be lost. So two rules of the same meaning merge only when (besides being of
the same type: services/brain_knowledge.py) neither rule nor trigger tells them apart here:

- both say the same of what they name (``polarity``): both forbid, both insist, or neither does. A rule insists
  when it negates a stop: a negation right before a verb of stopping or leaving out ("Never skip ...", "Don't
  avoid ...", "must not ignore", "Stop skipping ...", "Avoid skipping ...", "N'évite jamais", "évite de sauter",
  "nicht überspringen", "no omitas"): two negations, so "Never skip the smoke tests" is the opposite of "Skip the
  smoke tests", though both hold a negation or a stop, and is kept apart from a rule with no negation too. Else
  a rule forbids when its head, or the head after its leading conditions ("When deploying, never ...", "If it
  fails, do not ..."), is a negation or a stop ("Never ...", "Do not ...", "Don't ...", "Avoid ...", "No ...",
  "Stop ...", "Skip ..."), when a negation stands right before its main verb, after the subject ("We never push
  to main", "Make sure to not push"), when a modal or auxiliary is negated anywhere ("must not", "should never",
  "cannot", "isn't"), when it says "no longer" or that the thing is forbidden ("is prohibited", "banned"), or when it
  holds a negation of French, German, Spanish, Portuguese, Dutch, Russian, Hebrew, Arabic, Chinese, Japanese
  or Korean ("interdit", "verboten", "no se", "אל תשתמש", "لا", 不, 无需, ない, ません, 않, 없, ...).
  Typographic apostrophes and markdown emphasis are read through ("Don’t", "Do **not**").
  A contrast inside a rule that does not forbid ("Use react-hook-form with zod, not Formik") is not a negation
  of the rule: it merges with "Build forms with react-hook-form and zod rather than Formik". Nor is a "no longer"
  that bounds ("no longer than 15 minutes", "no more than three retries": it is held apart from "longer than 15
  minutes" instead) or that says, beside the rule, what it leaves behind ("Moment.js is no longer maintained, use
  date-fns", "Moment.js isn't maintained anymore, use date-fns"); "We no longer deploy on Fridays" and "The legacy
  shim is no longer needed" (or "isn't needed anymore"), alone, forbid;
- neither holds a word whose opposite the other holds in its place: a pair of a fixed list ("inside" and
  "outside", "only" and "any", "enable" and "disable", "before" and "after", "staging" and "production",
  "newest" and "oldest", "mock" and "real", "squash" and "rebase", "avec" and "sans"), as written or in other
  English forms of both ("squashing" and "rebasing"), a word and the same word under a reversing prefix
  ("activer" and "désactiver", "aktiviere" and "deaktiviere", "lock" and "unlock"), or one stem under opposite
  prefixes ("import" and "export", "upload" and "download", "onboarding" and "offboarding");
- both turn something off, or neither does ("Usar UTC" is not "Desactivar UTC": a reversing prefix on a stem
  of switching on, "deactivate", "disable", "desactivar", "deshabilitar", "uninstall", "disconnect");
- neither holds, in Chinese, Japanese or Korean (written without spaces), a word of a fixed list of opposite
  pairs whose opposite the other holds instead (有効 and 無効, 可能 and 不可能, 許可 and 禁止, 前 and 后, 활성
  and 비활성);
- when both name numbers, they name the same ones ("a timeout of 30 s" is not "a timeout of 5 s"), in digits or
  in English words ("two", "four hundred", "a dozen", "twice", "single": "Require one approval" is not "Require
  two approvals"); ordinals ("first", "2nd") are compared with ordinals only;
- when both name weekdays, they name the same ones ("Deploy on Fridays" is not "Deploy on Mondays"; English,
  French, German, Spanish), and so for months and for how often ("daily", "weekly");
- when the two are word for word the same but one word, those two are not rivals of a closed class (numbers,
  weekdays, months, units, formats, package managers, log levels, ...: ``_CLASSES``) or a pair of the fixed list:
  "Retry after 30 seconds" is not "Retry after 30 minutes", while "Ship on Fridays" is "Deploy on Fridays" (by
  the words alone);
- both are qualified alike: how often, beyond "always" ("rarely", "sometimes", "usually"), or an exception
  ("except", "unless"), in English, French, German or Spanish: "Seldom run the smoke tests" is not "Always run
  the smoke tests", and a rule with an "except ..." clause not the rule without it;
- when both weigh one thing against another ("over", "rather than", "instead of", "than", "versus"; or "before",
  or "after", in both), neither puts on one side what the other puts on the other ("Prefer Postgres over SQLite"
  is not "Prefer SQLite over Postgres"; "Seed after migrating" is not "Migrate after seeding").

With the model at hand (``WordSense``, as semantic dedup has it), one more: when the two are word for word the
same but a few words (at most ``SWAPPED_WORDS_MAX`` on each side), and those words name a thing the model knows
no word for (a name it spells in several word pieces, "memcached", "savepoint", "vitest", or one written with a
capital inside the rule, "Black"), the swapped words alone are alike in meaning. A long rule with one thing swapped
for another sits close to it for all the words they share ("Cache user sessions in Redis with a one hour expiry
so the API servers stay stateless" against the same in Memcached, 0.81), while the things themselves are far
apart (Redis and Memcached, 0.21). Words the model knows are left to the whole rule's similarity: alone, two words
of one meaning can be far apart ("write" and "add", 0.17), and two units of one place are one ("s" and "seconds").

Each test errs one way: a rewording read as different is only not merged (a near-copy is kept). What they cannot
see still merges: opposites said with other verbs ("Retry failed webhooks" against "Give up on failed
webhooks").
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Literal, NamedTuple, Protocol

_HEAD = re.compile(r"^\W*(?:never|no|avoid|don'?t|do\s+not|dont|stop|skip|quit|refrain|nie|niemals|kein\w*"
                   r"|vermeide\w*|jamais|ne|n'|évite\w*|evite\w*|nunca|jamás|evita\w*)\b", re.IGNORECASE)
_NEGATED_MODAL = re.compile(
    r"\b(?:must|should|shall|can|could|may|might|will|would|do|does|did|is|are|was|were|need|ought\s+to|has|have)"
    r"\s+(?:not|never)\b|\b(?:mustn|shouldn|shan|can|couldn|mightn|won|wouldn|don|doesn|didn|isn|aren|wasn|weren"
    r"|needn|hasn|haven)'?t\b|\bcannot\b|\b(?:forbidden|prohibited|banned|disallowed|not\s+allowed)\b"
    r"|\bno\s+longer\b",  # "Staging deploys no longer need ..."
    re.IGNORECASE)
# a stop negated: a negation right before a verb of stopping or leaving out, two negations that insist on the thing
# ("Never skip the smoke tests" is "Always run them", the opposite of "Skip the smoke tests"); in French the verb
# between ne and its pas or jamais, or after them; in German nie, niemals or nicht before or after the verb
_STOPPING = r"(?:skip|avoid|stop|quit|refrain|omit|ignor|bypass|forget|forgot|neglect)\w*"
_STOPPING_FR = r"(?:[ée]vit|ignor|omet|omis|oubli|saut|arr[êe]t|cess)\w*"
_STOPPING_DE = r"(?:vermeid|übersprin|ueberspring|ignorier|vergiss|vergess|auslass|unterlass)\w*"
_NEGATED_STOP = re.compile(
    r"\b(?:never|not|no\s+longer|\w+n't|dont|cannot|avoid\w*|stop\w*|quit\w*)(?:\s+(?:ever|again|to|from))*\s+"
    + _STOPPING + r"\b"
    + r"|(?:\bn'|\bne\s+)(?:\w+\s+)?" + _STOPPING_FR + r"\s+(?:jamais|pas|plus)\b"
    + r"|\bne\s+(?:jamais|pas|plus)\s+(?:\w+\s+)?" + _STOPPING_FR
    + r"|\b(?:[ée]vit|arr[êe]t|cess)\w*\s+d(?:e\s+|')" + _STOPPING_FR  # évite de sauter
    + r"|\b" + _STOPPING_DE + r"\s+(?:[\w-]+\s+){0,3}(?:nie|niemals|nicht)\b"
    + r"|\b(?:nie|niemals|nicht)\s+(?:[\w-]+\s+){0,3}" + _STOPPING_DE
    + r"|\b(?:nunca|jamás|no)\s+(?:\w+\s+)?(?:evit|omit|ignor|salt|olvid)\w*", re.IGNORECASE)
_OTHER_LANGUAGES = re.compile(
    r"\b(?:ne|pas|jamais|nicht|nie|niemals|kein\w*|nunca|jamás|non(?![-\u2010-\u2015])|não|niet|nooit|geen|не|нельзя|никогда)\b"
    r"|\bn'|\bno\s+(?:se|debe\w*|hay|pued\w+|es|son|est[aá]\w*)\b"  # Spanish "no" before a verb, not English "no more"
    r"|\b(?:interdit\w*|verboten|prohibid\w*|proibid\w*|vietat\w*)\b"
    r"|\b[וש]?(?:לא|אין|אסור\w*|בלי|ללא)\b|\b[וש]?אל\s+ת|\bאף\s+פעם\b"  # Hebrew: not, there is no, forbidden,
    # without, never (אל only before a verb of the second person: alone it is also "to")
    r"|\b(?:لا|لن|لم|ليس\w*|ممنوع|أبدا|أبداً|عدم|بدون)(?!\w)"  # Arabic
    # 无 and 非 begin nouns too (无服务器 "serverless", 非同期 "asynchronous", 非生产 "non-production"): only 无
    # before 需/须/法/权 ("no need", "cannot", "no right") forbids
    r"|[不别勿禁没]|无(?=[需须法权])|ない|ません|ずに|せず|않|말라|금지|없|못|지\s*마", re.IGNORECASE)
# a negation right before the rule's main verb, after its subject ("We never push to main", "The bot no longer
# pings the team", "Make sure to not push", "We should really not push"): "never" or "no longer" (then perhaps
# "ever" or "again"), or "not" after "to", a pronoun or a modal with an adverb; then a verb written in lower case
# that is no function word. Only in the rule's first clause, before any relative pronoun: "Use zod, never Formik"
# contrasts two things (so does "Use zod never Formik": a name), "Archive the projects that never shipped" names
# the projects. ("don't" and "no longer" anywhere are _NEGATED_MODAL's; French and German _OTHER_LANGUAGES'.)
_NOT_A_VERB = (r"(?:a|an|the|any|all|every|each|more|less|once|twice|again|before|after|on|in|at|for|with|without"
               r"|to|from|by|as|than|only|just|yet|too|so|mind|ever)\b")
_MID_NEGATION = re.compile(
    r"\b(?i:never|no\s+longer)(?:\s+(?i:ever|again))?\s+(?!" + _NOT_A_VERB + r")[a-z]"
    r"|\b(?i:to|we|you|they|i|he|she|it|one|must|should|shall|can|could|may|might|will|would|need|better)"
    r"(?:\s+[A-Za-z]+ly)?\s+(?i:not)\s+(?!" + _NOT_A_VERB + r")[a-z]")
_CLAUSE = re.compile(r"[,;:(]|\s[-\u2013\u2014]\s|\b(?i:but|that|which|who|whom|whose|what|where|unless|except)\b")
_APOSTROPHES = str.maketrans({"’": "'", "‘": "'", "ʼ": "'", "`": "'", "*": None})
_EMPHASIS = re.compile(r"(?<!\w)_+|_+(?!\w)")  # _not_, __not__; never the underscore inside a word

_OPPOSITES = [("always", "never"), ("only", "any"), ("enable", "disable"), ("enabled", "disabled"), ("allow", "forbid"),
              ("allow", "deny"), ("allowed", "forbidden"), ("with", "without"), ("inside", "outside"),
              ("include", "exclude"), ("add", "remove"), ("on", "off"), ("true", "false"), ("yes", "no"),
              ("before", "after"), ("first", "last"), ("increase", "decrease"), ("more", "less"),
              ("more", "fewer"), ("above", "below"), ("over", "under"), ("min", "max"), ("minimum", "maximum"),
              ("sync", "async"), ("synchronous", "asynchronous"), ("tabs", "spaces"), ("public", "private"),
              ("keep", "delete"), ("keep", "drop"), ("open", "close"), ("start", "stop"), ("lock", "unlock"),
              ("mandatory", "optional"), ("required", "optional"), ("strict", "lenient"), ("upper", "lower"),
              ("uppercase", "lowercase"), ("ascending", "descending"), ("accept", "reject"), ("pass", "fail"),
              ("local", "remote"), ("dev", "prod"), ("development", "production"), ("staging", "production"),
              ("activate", "deactivate"), ("allow", "block"), ("show", "hide"), ("grant", "revoke"),
              ("read", "write"), ("push", "pull"), ("accept", "refuse"),
              # what a team's coding rules pick between (an outside probe saw "newest first" merge with "oldest
              # first", "locally" with "remotely", "mock" with "real", "primary" with "replica", "squash" with
              # "rebase", "onboarding" with "offboarding")
              ("newest", "oldest"), ("newer", "older"), ("new", "old"), ("latest", "earliest"), ("latest", "oldest"),
              ("earliest", "newest"), ("early", "late"), ("earlier", "later"), ("asc", "desc"),
              ("locally", "remotely"), ("locally", "ci"), ("onboarding", "offboarding"), ("online", "offline"),
              ("mock", "real"), ("mocked", "real"), ("fake", "real"), ("stub", "real"), ("mock", "live"),
              ("primary", "replica"), ("primary", "secondary"), ("master", "replica"), ("leader", "follower"),
              ("squash", "rebase"), ("merge", "rebase"), ("squash", "merge"),
              ("most", "least"), ("higher", "lower"), ("high", "low"), ("highest", "lowest"), ("larger", "smaller"),
              ("large", "small"), ("bigger", "smaller"), ("longer", "shorter"), ("long", "short"),
              ("increment", "decrement"), ("manual", "automatic"), ("manual", "automated"),
              ("manually", "automatically"), ("approve", "reject"), ("success", "failure"), ("succeed", "fail"),
              ("allowlist", "denylist"), ("allowlist", "blocklist"), ("whitelist", "blacklist"),
              ("client", "server"), ("frontend", "backend"), ("front", "back"), ("unit", "integration"),
              ("unit", "e2e"), ("integration", "e2e"), ("inbound", "outbound"), ("input", "output"),
              ("incoming", "outgoing"), ("absolute", "relative"), ("sequential", "parallel"),
              ("sequentially", "parallel"), ("serial", "parallel"), ("eager", "lazy"), ("eagerly", "lazily"),
              ("stateful", "stateless"), ("optimistic", "pessimistic"), ("hard", "soft"), ("temporary", "permanent"),
              ("ephemeral", "persistent"), ("light", "dark"), ("top", "bottom"), ("start", "end"), ("begin", "end"),
              ("beginning", "end"), ("leading", "trailing"), ("prefix", "suffix"), ("horizontal", "vertical"),
              ("up", "down"), ("weekday", "weekend"), ("weekdays", "weekends"), ("utc", "local"),
              ("http", "https"), ("get", "post"), ("camelcase", "snake_case"), ("camelcase", "pascalcase"),
              ("pascalcase", "snake_case"), ("major", "minor"), ("minor", "patch"), ("major", "patch"),
              # French, German, Spanish
              ("toujours", "jamais"), ("avant", "après"), ("avec", "sans"), ("autoriser", "interdire"),
              ("immer", "nie"), ("vor", "nach"), ("mit", "ohne"), ("erlauben", "verbieten"),
              ("siempre", "nunca"), ("antes", "después"), ("con", "sin"), ("permitir", "prohibir")]
_OPPOSITE = {pair for a, b in _OPPOSITES for pair in ((a, b), (b, a))}
# a word and the same word reversed by a prefix, accents aside: activer and désactiver, aktiviere and deaktiviere,
# lock and unlock, valid and invalid; or the same stem under two opposite prefixes: enable and disable, import and
# export, einschalten and ausschalten, upload and download. The stem has 4 letters or more (bug is not debug).
_REVERSING = ("de", "des", "dis", "un", "in", "im", "il", "ir", "non", "ent", "anti")
_SWAPPED_PREFIXES = [("en", "dis"), ("en", "de"), ("im", "ex"), ("in", "ex"), ("ein", "aus"), ("an", "aus"),
                     ("auf", "zu"), ("ver", "ent"), ("up", "down"), ("on", "off")]
_PREFIXES = {pair for a, b in [*(("", r) for r in _REVERSING), *_SWAPPED_PREFIXES] for pair in ((a, b), (b, a))}
_STEM_MIN = 4
# a word that turns something off whatever the other rule says in its place ("Usar UTC" against "Desactivar UTC"):
# a reversing prefix on a stem of switching on (activ, habilit, able, install, connect, mount, subscribe)
_SWITCHED_OFF = re.compile(r"(?:de|des|dis|un|in|ent)(?:activ|aktiv|habilit|abl|instal|connect|conect|mount"
                           r"|subscri|suscri|abonn)\w*")
# Chinese, Japanese and Korean write without spaces: opposite pairs are found inside the text, a shorter one not
# counted where it is part of its longer opposite (可能 inside 不可能)
_CJK_OPPOSITES = [("有効", "無効"), ("可能", "不可能"), ("有", "無"), ("許可", "禁止"), ("許可", "拒否"),
                  ("開始", "停止"), ("追加", "削除"), ("前", "後"), ("以上", "以下"), ("最大", "最小"),
                  ("同期", "非同期"), ("必須", "任意"), ("常に", "決して"),
                  ("启用", "禁用"), ("开启", "关闭"), ("打开", "关闭"), ("允许", "禁止"), ("同步", "异步"),
                  ("前", "后"), ("增加", "减少"), ("添加", "删除"), ("有效", "无效"), ("总是", "从不"),
                  ("활성", "비활성"), ("허용", "금지"), ("허용", "거부"), ("켜", "끄"), ("이전", "이후"),
                  ("동기", "비동기"), ("항상", "절대")]
_WORD = re.compile(r"\w+")
# "X, not Y", "X and not Y", "X but never Y": a contrast after a comma, "and" or "but" weighs as "rather than"
_WEIGHED = re.compile(r"\b(?:over|rather\s+than|instead\s+of|than|versus|vs|before|after)\b"
                      r"|(?:,\s*(?:and\s+|but\s+)?|\s+(?:and|but)\s+)(?:not|never)\b")
_PREFERENCE = "preference"  # over, rather than, ", not" ...: one class, as "X over Y" is "X rather than Y"
_FILLER = frozenset({"the", "a", "an", "to", "of", "for", "in", "on", "at", "with", "and", "or", "is", "are", "be",
                     "it", "its", "this", "that", "when", "if", "you", "we", "our", "your", "always", "prefer"})
_SUFFIXES = ("ing", "ed", "es", "s")
# a number in digits (1,000 and 2.5 read as numbers; 1st, 2nd, 3rd, 4th as ordinals) or a run of letters
_TOKEN = re.compile(r"(\d+(?:[.,]\d+)*)((?:st|nd|rd|th)(?![^\W\d_]))?|[^\W\d_]+")
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+")
_CARDINALS = {w: n for n, w in enumerate((
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
    "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"))}
_TENS = {w: 10 * n for n, w in enumerate(("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty",
                                          "ninety"), 2)}
_NUMBER_WORDS = _CARDINALS.keys() | _TENS.keys()
_SCALES = {"hundred": 100, "thousand": 1000, "million": 10 ** 6, "billion": 10 ** 9, "dozen": 12}
_TIMES = {"once": 1, "twice": 2, "thrice": 3, "single": 1, "double": 2, "triple": 3}  # each a number of its own
_ORDINALS = {w: n for n, w in enumerate((
    "first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth", "tenth", "eleventh",
    "twelfth", "thirteenth", "fourteenth", "fifteenth", "sixteenth", "seventeenth", "eighteenth", "nineteenth",
    "twentieth"), 1)}
_CLAUSE_END = re.compile(r"(?:^|[,;:.!?(\[])\s*$")  # "Once the build passes, ..." : "once" is then "when"
# weekdays and months, in English (also short: Mon, Tue, ..., Jan, Feb, ...), French, German and Spanish, accents
# aside; an English weekday may be plural (Fridays), a German one adverbial (freitags)
_WEEKDAYS = ["monday lundi montag lunes", "tuesday mardi dienstag martes", "wednesday mercredi mittwoch miercoles",
             "thursday jeudi donnerstag jueves", "friday vendredi freitag viernes",
             "saturday samedi samstag sonnabend sabado", "sunday dimanche sonntag domingo"]
_MONTHS = ["january janvier januar janner enero", "february fevrier februar febrero", "mars marz maerz marzo",
           "april avril abril", "mai mayo", "june juin juni junio", "july juillet juli julio",
           "aout agosto", "september septembre septiembre setiembre", "october octobre oktober octubre",
           "november novembre noviembre", "december decembre dezember diciembre"]
_CALENDAR = {**{w: ("weekday", n) for n, ws in enumerate(_WEEKDAYS) for w in ws.split()},
             **{w: ("month", n) for n, ws in enumerate(_MONTHS) for w in ws.split()}}
# words that are also something else ("may", "march", "mars", "sun", "sat", "wed", "mon" in French): a day or a
# month only written with a capital and not as the text's first word ("Deploy in May", not "May we deploy")
_CAPITALISED = {**{w: ("weekday", n) for n, ws in enumerate(
    ["mon", "tue tues", "wed", "thu thur thurs", "fri", "sat", "sun"]) for w in ws.split()},
                **{w: ("month", n) for n, ws in enumerate(
                    ["jan", "feb", "mar march", "apr", "may", "jun", "jul", "aug august", "sep sept", "oct",
                     "nov", "dec"]) for w in ws.split()}}
_FREQUENCIES = {w: n for n, ws in enumerate(["hourly", "daily nightly", "weekly", "biweekly fortnightly", "monthly",
                                             "quarterly", "yearly annually"]) for w in ws.split()}
# the closed classes whose words, one substituted for another of the same class in a rule otherwise word for word
# the same, make another rule ("Retry after 30 seconds" is not "Retry after 30 minutes"): a class, and the word's
# place in it (two words of one place are one: "s" and "seconds")
_UNITS = {w: n for n, ws in enumerate(["ms millisecond milliseconds", "s sec secs second seconds",
                                       "min mins minute minutes", "h hr hrs hour hours", "day days", "week weeks",
                                       "month months", "year years", "b byte bytes", "kb kib kilobyte kilobytes",
                                       "mb mib megabyte megabytes", "gb gib gigabyte gigabytes",
                                       "tb tib terabyte terabytes"]) for w in ws.split()}
_FAMILIES = {w: (n, i) for n, family in enumerate([
    "json yaml/yml toml xml csv ini", "npm pnpm yarn bun", "main/master develop", "get post put patch delete",
    "trace debug info warn/warning error fatal/critical", "dev/development staging prod/production qa"])
    for i, ws in enumerate(family.split()) for w in ws.split("/")}
_CLASSES: list[Mapping[str, object]] = [_CARDINALS | _TIMES, _ORDINALS, _UNITS, _FREQUENCIES, _FAMILIES,
                                        _CALENDAR | _CAPITALISED]


def _plain(text: str) -> str:
    """``text`` with typographic apostrophes as ASCII and markdown emphasis marks taken out."""
    return _EMPHASIS.sub("", text.translate(_APOSTROPHES))


# a leading condition, which the rule's head follows ("When deploying, never skip ...", "If it fails: do not ...")
_CONDITION = re.compile(r"^\W*(?:when|whenever|if|while|before|after|once|during|for|in|on|with|without|quand|lorsque"
                        r"|si|pour|avant|après|wenn|falls|bei|vor|nach|für|cuando|si|para|antes|después)\b[^,;:]*[,;:]",
                        re.IGNORECASE)


# "no longer" where it is no negation of the rule (before 2026-12-07 every "no longer" forbade): a bound ("no longer
# than 15 minutes", "no more than three retries", "no later than Friday"), and a clause saying a thing is no longer
# needed, used or maintained beside the rule it explains ("Moment.js is no longer maintained, use date-fns", "Build
# with Vite; Webpack is no longer used", "Moment.js isn't maintained anymore, use date-fns"): the contrast names what
# is left behind, the rule says what to do. Such a
# clause alone ("The legacy shim is no longer needed") still forbids, the opposite of "The legacy shim is needed",
# and so does one of permission ("Deploys are no longer allowed on Fridays"), and "We no longer deploy on Fridays".
_COMPARED = (r"(?:longer|more|less|fewer|later|earlier|older|shorter|bigger|larger|greater|higher|lower|wider|slower"
             r"|faster|smaller)\s+than\b")
_BOUND = re.compile(r"\bno\s+" + _COMPARED, re.IGNORECASE)
_COMPARISON = re.compile(r"\b(no\s+)?(" + _COMPARED + ")", re.IGNORECASE)
_CONTRAST_BREAK = re.compile(r"([,;:()]|\.(?=\s|$)|\s[-\u2013\u2014]\s"
                             r"|\b(?:since|because|as|now\s+that|and|but|so|while|whereas)\b)", re.IGNORECASE)
_STATE = (r"(?:needed|required|necessary|mandatory|used|in\s+use|maintained|supported|recommended|relevant|valid"
          r"|current|the\s+default|default)")
_NO_LONGER_STATE = re.compile(
    r"(?:\b(?:is|are|was|were|be|been|being)|'s|'re)\s+no\s+longer\s+" + _STATE + r"\b"
    r"|\b(?:is|are|was|were)(?:n't|\s+not)\s+" + _STATE + r"(?:\s+\w+)?\s+(?:anymore|any\s+(?:more|longer))\b",
    re.IGNORECASE)


def _as_directive(text: str) -> str:
    """``text`` as its polarity reads it: a bound ("no longer than") said as "at most", and a clause of a thing
    no longer needed (``_NO_LONGER_STATE``) taken out, with the break before it (or after it, first), when another
    clause holds a word."""
    text = _BOUND.sub("at most", text)
    parts = _CONTRAST_BREAK.split(text)  # clause, break, clause, ...
    states = [i for i in range(0, len(parts), 2) if _NO_LONGER_STATE.search(parts[i])]
    if not states or not any(_WORD.search(parts[i]) for i in range(0, len(parts), 2) if i not in states):
        return text
    for i in reversed(states):
        if i:
            del parts[i - 1 : i + 1]  # the break before it and the clause
        else:
            del parts[0:2]  # the first clause and the break after it
    return "".join(parts)


def _bound_flipped(text: str, other: str) -> bool:
    """Whether one rule bounds what the other exceeds: "no longer than 15 minutes" against "longer than 15 minutes"
    (a bound reads as no negation, so polarity does not tell them apart)."""
    def bounds(rule: str) -> set[tuple[str, bool]]:
        return {(" ".join(m[2].casefold().split()), bool(m[1])) for m in _COMPARISON.finditer(_plain(rule))}
    mine, theirs = bounds(text), bounds(other)
    return any((compared, not bounded) in theirs for compared, bounded in mine - theirs)


Polarity = Literal["does", "forbids", "insists"]


def polarity(rule: str) -> Polarity:
    """What ``rule`` says of what it names (see the module's docstring): "insists" when it negates a stop ("Never
    skip ...", "Don't avoid ...", "N'évite jamais ...": it must be done), else "forbids" when its head, or the head
    after its leading conditions, is a negation or a stop, or it holds a negation elsewhere, else "does"."""
    plain = _as_directive(_plain(rule))
    if _NEGATED_STOP.search(plain):
        return "insists"
    head = plain
    while (condition := _CONDITION.match(head)) is not None:
        head = head[condition.end():]
    if _HEAD.search(plain) or _HEAD.search(head) or _NEGATED_MODAL.search(plain) or _OTHER_LANGUAGES.search(plain):
        return "forbids"
    if _MID_NEGATION.search(_CLAUSE.split(head, maxsplit=1)[0]):
        return "forbids"
    return "does"


def forbids(rule: str) -> bool:
    """Whether ``rule`` says not to do what it names (``polarity``)."""
    return polarity(rule) == "forbids"


# words that qualify a rule, each of its kind: how often (a hedge on "always") and except (an exception); two rules
# qualified otherwise say other things ("Always wrap a migration in a transaction" is not "Only rarely wrap a
# migration in a transaction", nor "... except on MySQL")
_QUALIFIERS = {w: kind for kind, ws in [
    ("rarely", "rarely seldom hardly rarement selten raramente"),
    ("sometimes", "sometimes occasionally parfois manchmal gelegentlich ocasionalmente"),
    ("usually", "usually often mostly generally normally typically frequently souvent meistens oft normalerweise "
                "generalmente normalmente"),
    ("except", "except excepting excluding unless sauf außer ausser excepto salvo")] for w in ws.split()}


def _qualified(words: set[str]) -> frozenset[str]:
    """The kinds of ``_QUALIFIERS`` among ``words``."""
    return frozenset(_QUALIFIERS[w] for w in words if w in _QUALIFIERS)


def _apart(text: str, other: str) -> bool:
    if polarity(text) != polarity(other) or _bound_flipped(text, other):
        return True
    words, others = set(_WORD.findall(_plain(text).casefold())), set(_WORD.findall(_plain(other).casefold()))
    if _qualified(words) != _qualified(others):
        return True
    if any(_contrary(a, b) or _reversed(a, b) for a in words - others for b in others - words):
        return True
    if _switches_off(words - others) != _switches_off(others - words) or _cjk_opposed(text, other):
        return True
    if any(mine and theirs and mine != theirs for mine, theirs in zip(_named(text), _named(other), strict=True)):
        return True
    return _swapped(text, other) or _substituted(text, other) or _exchanged(text, other)


# words that join two things without ranking them: "Redis and Postgres" is "Postgres and Redis"
_SYMMETRIC = frozenset({"and", "or", "plus", "nor", "both", "either", "neither", "as", "well", "et", "ou", "und",
                        "oder", "y", "o", "e"})


def _exchanged(text: str, other: str) -> bool:
    """Whether ``other`` is ``text`` with two of its parts exchanged around the words between them, the rest word
    for word the same ("Copy production data to staging" and "Copy staging data to production"; "Merge main into
    your branch" and "Merge your branch into main"): what goes where, or what is used for which, is turned around.
    Not when nothing stands between the parts (two clauses said in the other order: "When X, do Y" and "Do Y when
    X"), nor when what does joins them alike ("at rest and in transit" and "in transit and at rest")."""
    words = [_stem(w) for w in _WORD.findall(_plain(text).casefold())]
    others = [_stem(w) for w in _WORD.findall(_plain(other).casefold())]
    if len(words) != len(others) or sorted(words) != sorted(others) or words == others:
        return False
    start = 0
    while words[start] == others[start]:
        start += 1
    end = len(words)
    while words[end - 1] == others[end - 1]:
        end -= 1
    mine, theirs = words[start:end], others[start:end]
    size = len(mine)  # mine = A + M + B and theirs = B + M + A, with A, M and B not empty
    firsts = [n for n in range(1, size - 1) if mine[:n] == theirs[size - n:]]  # the lengths A may have
    lasts = [n for n in range(1, size - 1) if mine[size - n:] == theirs[:n]]  # and B
    return any(first + last < size and mine[first:size - last] == theirs[last:size - first]
               and not set(mine[first:size - last]) <= _SYMMETRIC for first in firsts for last in lasts)


def _contrary(word: str, other: str) -> bool:
    """Whether two words are a pair of ``_OPPOSITES``, as written or in other forms (squashing and rebasing)."""
    return (word, other) in _OPPOSITE or (_stem(word), _stem(other)) in _STEM_OPPOSITE


def _number(digits: str) -> Decimal | str:
    """The value of a number in digits (1,000 is 1000; 2,5 is 2.5); a version such as 1.2.3 as it is written."""
    if _THOUSANDS.fullmatch(digits):
        digits = digits.replace(",", "")
    elif digits.count(".") + digits.count(",") <= 1:
        digits = digits.replace(",", ".")
    else:
        return digits
    try:
        return Decimal(digits)
    except InvalidOperation:  # pragma: no cover - \d only holds what Decimal reads
        return digits


def _numbers(text: str) -> tuple[frozenset[Decimal | str], frozenset[Decimal | str]]:
    """The numbers ``text`` names, in digits or in English words ("four hundred and twenty", "a dozen", "twice",
    "single"), and apart from them its ordinals ("first", "2nd")."""
    plain = _plain(text).casefold()
    cardinals: set[Decimal | str] = set()
    ordinals: set[Decimal | str] = set()
    tokens = list(_TOKEN.finditer(plain))
    total, current, last = Decimal(0), Decimal(0), ""  # last: what the number being read ended with, "" if none

    def flush() -> None:
        nonlocal total, current, last
        if last:
            cardinals.add(total + current)
        total, current, last = Decimal(0), Decimal(0), ""

    for i, token in enumerate(tokens):
        word, following = token.group(0), tokens[i + 1].group(0) if i + 1 < len(tokens) else ""
        previous = tokens[i - 1].group(0) if i else ""
        if token.group(1):
            flush()
            value = _number(token.group(1))
            if token.group(2):
                ordinals.add(value)
            elif isinstance(value, Decimal) and following in _SCALES:
                current, last = value, "digits"  # 2 hundred, 30 thousand
            else:
                cardinals.add(value)
        elif word in _CARDINALS:
            if last in ("unit", "digits") or (last == "tens" and _CARDINALS[word] >= 10):
                flush()
            current, last = current + _CARDINALS[word], "unit"
        elif word in _TENS:
            if last in ("unit", "tens", "digits"):
                flush()
            current, last = current + _TENS[word], "tens"
        elif word in _SCALES:
            scale = _SCALES[word]
            if scale < 1000:  # hundred, dozen
                current = (current if last else Decimal(1)) * scale
            else:
                total, current = total + (current if last else Decimal(1)) * scale, Decimal(0)
            last = "scale"
        elif (word == "and" and last and following in _NUMBER_WORDS) or (word == "a" and following in _SCALES):
            continue  # one hundred and twenty; a dozen, a hundred
        else:
            flush()
            if word in _TIMES and not (word == "once" and (previous == "at" or _CLAUSE_END.search(
                    plain[:token.start()]))):
                cardinals.add(Decimal(_TIMES[word]))
            elif word in _ORDINALS and not (word == "second" and (
                    previous in ("a", "per") or previous in _NUMBER_WORDS or previous[:1].isdigit())):
                ordinals.add(Decimal(_ORDINALS[word]))
    flush()
    return frozenset(cardinals), frozenset(ordinals)


def _named(text: str) -> tuple[frozenset[object], ...]:
    """What ``text`` names of each closed set compared whole: its numbers, its ordinals, its weekdays, its months
    and how often (daily, weekly, ...)."""
    days: set[object] = set()
    months: set[object] = set()
    frequencies: set[object] = set()
    for i, found in enumerate(re.finditer(r"[^\W\d_]+", _plain(text))):
        word = found.group(0)
        key = _unaccented(word).casefold()
        named = _CALENDAR.get(key) or (_CAPITALISED.get(key) if i and word[0].isupper() else None)
        if named is None and key.endswith("s") and _CALENDAR.get(key[:-1], ("", 0))[0] == "weekday":
            named = _CALENDAR[key[:-1]]  # Fridays, freitags, lundis
        if named is not None:
            (days if named[0] == "weekday" else months).add(named[1])
        if key in _FREQUENCIES:
            frequencies.add(_FREQUENCIES[key])
    return (*_numbers(text), frozenset(days), frozenset(months), frozenset(frequencies))


def _substituted(text: str, other: str) -> bool:
    """Whether the two are word for word the same but one, and those two words are rivals of one closed class
    (``_CLASSES``: numbers, ordinals, units, frequencies, weekdays and months, formats, package managers, branches,
    HTTP methods, log levels, environments) or a pair of ``_OPPOSITES``: "Retry after 30 seconds" and "Retry after
    30 minutes", "Write the config in YAML" and "Write the config in TOML"."""
    words, others = _WORD.findall(_plain(text).casefold()), _WORD.findall(_plain(other).casefold())
    if len(words) != len(others):
        return False
    changed = [(_unaccented(a), _unaccented(b)) for a, b in zip(words, others, strict=True) if a != b]
    if len(changed) != 1:
        return False
    a, b = changed[0]
    return _contrary(a, b) or _one_class(a, b) is False


def _unaccented(word: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))


def _reversed(word: str, other: str) -> bool:
    """Whether one word is the other under a reversing prefix, or both one stem under opposite prefixes
    (``_PREFIXES``), accents aside."""
    a, b = _unaccented(word), _unaccented(other)
    if len(a) > len(b):
        a, b = b, a
    for cut in range(0, min(len(a), 4) + 1):
        head, stem = a[:cut], a[cut:]
        if len(stem) >= _STEM_MIN and b.endswith(stem) and (head, b[:-len(stem)]) in _PREFIXES:
            return True
    return False


def _switches_off(words: set[str]) -> bool:
    return any(_SWITCHED_OFF.fullmatch(_unaccented(w)) for w in words)


def _holds(text: str, word: str, opposite: str) -> bool:
    """Whether ``text`` holds ``word`` outside its ``opposite`` (可能 outside 不可能)."""
    return word in (text.replace(opposite, "") if word in opposite else text)


def _cjk_opposed(text: str, other: str) -> bool:
    """Whether one holds a word of ``_CJK_OPPOSITES`` and not its opposite, and the other the opposite and not
    the word."""
    for a, b in _CJK_OPPOSITES:
        if a in text or b in text:
            mine, theirs = (_holds(text, a, b), _holds(text, b, a)), (_holds(other, a, b), _holds(other, b, a))
            if mine in ((True, False), (False, True)) and theirs == (mine[1], mine[0]):
                return True
    return False


def _stem(word: str) -> str:
    """A word without its commonest English ending (seeding, seeded, seeds: seed; migrate, migrating: migrat),
    enough to pair its forms. A word ending in "ss" keeps it (pass, passes, passed: pass; class, classes: class)."""
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not (suffix == "s" and word.endswith("ss")):
            word = word[:-len(suffix)]
            break
    return word[:-1] if word.endswith("e") and len(word) >= 4 else word


# the pairs of _OPPOSITES in other forms (squashing and rebasing, mocked and real), stems of 4 letters or more
_STEM_OPPOSITE = {(_stem(a), _stem(b)) for a, b in _OPPOSITE
                  if _stem(a) != _stem(b) and min(len(_stem(a)), len(_stem(b))) >= _STEM_MIN}


def _sides(text: str) -> tuple[str, frozenset[str], frozenset[str]] | None:
    """What ``text`` weighs (its first "over", "before", ...: the class of the word) and the words on either side."""
    plain = _plain(text).casefold()
    found = _WEIGHED.search(plain)
    if found is None:
        return None
    marker = found.group(0) if found.group(0) in ("before", "after") else _PREFERENCE

    def words(part: str) -> frozenset[str]:
        return frozenset(_stem(w) for w in _WORD.findall(part) if w not in _FILLER)
    return marker, words(plain[:found.start()]), words(plain[found.end():])


def _swapped(text: str, other: str) -> bool:
    """Whether both weigh one thing against another the same way and each puts on one side a word the other puts
    on the other side ("Prefer Postgres over SQLite", "Prefer SQLite over Postgres")."""
    sides, other_sides = _sides(text), _sides(other)
    if sides is None or other_sides is None or sides[0] != other_sides[0]:
        return False
    (_, left, right), (_, other_left, other_right) = sides, other_sides
    return bool((left - right) & (other_right - other_left)) and bool((right - left) & (other_left - other_right))


# Swapped words: the words two texts otherwise word for word the same hold in each other's place, compared by the
# model when there are at most this many on each side (beyond, the texts are rewordings the model reads whole)
SWAPPED_WORDS_MAX = 3
# below this similarity swapped names name two things, not one thing two ways; measured with the shipped model
# (bench/dedup_bench.py): savepoint and transaction 0.19, Redis and Memcached 0.21, Jest and Vitest 0.31, mypy and
# pyright 0.32, Docker and Podman 0.45, Flask and Django 0.47; database and DB 0.85. Two names of one thing below
# it ("k8s" and "kubernetes", 0.48) are only kept as a near-copy.
SWAPPED_ALIKE = 0.5


class WordSense(Protocol):
    """What the model tells of words, for the swapped-words test (services/meaning.py gives it)."""

    def alike(self, text: str, other: str) -> float | None:
        """The similarity of two short texts; None when the model cannot tell."""

    def one_word(self, word: str) -> bool:
        """Whether the model knows ``word`` (lower case) as one word of its vocabulary."""


class Swapped(NamedTuple):
    mine: list[str]  # as written in the text
    theirs: list[str]  # as written in the other
    opening: bool  # they open the texts (a capital there is the sentence's)


def swapped_words(text: str, other: str) -> Swapped | None:
    """The words in which ``text`` and ``other`` differ when they are otherwise word for word the same (the same
    words before and after, case aside), at most ``SWAPPED_WORDS_MAX`` on each side and not mere other forms of one
    another; None otherwise, or when one only adds words to the other."""
    words, others = _WORD.findall(_plain(text)), _WORD.findall(_plain(other))
    folded, others_folded = [w.casefold() for w in words], [w.casefold() for w in others]
    shorter = min(len(words), len(others))
    start = 0
    while start < shorter and folded[start] == others_folded[start]:
        start += 1
    end = 0
    while end < shorter - start and folded[-1 - end] == others_folded[-1 - end]:
        end += 1
    mine, theirs = words[start:len(words) - end], others[start:len(others) - end]
    if not mine or not theirs or len(mine) > SWAPPED_WORDS_MAX or len(theirs) > SWAPPED_WORDS_MAX:
        return None
    if [_stem(w.casefold()) for w in mine] == [_stem(w.casefold()) for w in theirs]:
        return None
    return Swapped(mine, theirs, start == 0)


def _one_class(word: str, other: str) -> bool | None:
    """Of two words (lower case, unaccented) of one closed class (``_CLASSES``): whether they are one word of it
    ("s" and "seconds", "prod" and "production"; True) or rivals in it ("seconds" and "minutes"; False); None when
    no class holds both."""
    for c in _CLASSES:
        if word in c and other in c:
            return c[word] == c[other]
    return None


def _names_a_thing(words: list[str], opening: bool, model: WordSense) -> bool:
    """Whether ``words`` hold a name the model knows no word for: spelled in several word pieces, or capitalised
    where a sentence does not begin (``opening``: they open the text)."""
    return any(not model.one_word(w.casefold()) or (w[:1].isupper() and not (opening and i == 0))
               for i, w in enumerate(words))


def _other_things(text: str, other: str, model: WordSense) -> bool:
    swapped = swapped_words(text, other)
    if swapped is None:
        return False
    mine, theirs, opening = swapped
    if len(mine) == len(theirs) == 1 and _one_class(*(_unaccented(w.casefold()) for w in (*mine, *theirs))):
        return False
    if not (_names_a_thing(mine, opening, model) or _names_a_thing(theirs, opening, model)):
        return False
    similarity = model.alike(" ".join(mine), " ".join(theirs))
    return similarity is not None and similarity < SWAPPED_ALIKE


def opposed(rule: str, other: str, trigger: str = "", other_trigger: str = "", *,
            model: WordSense | None = None) -> bool:
    """Whether two rules (with their triggers) may say different things though a model finds them alike: one
    forbids and the other does not, a word of one has its opposite in the other, they name other numbers, weekdays,
    months or frequencies, one word is swapped for a rival of its class, they weigh the same things the other way
    round, or (given the ``model``) a name is swapped for one of another meaning."""
    if _apart(rule, other) or _apart(trigger, other_trigger):
        return True
    return model is not None and (_other_things(rule, other, model) or _other_things(trigger, other_trigger, model))
