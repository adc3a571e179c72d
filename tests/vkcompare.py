#!/usr/bin/env python3
"""Checks a Vulkan capture's text form (trace-decode's output) against
oracles that do not go through our layer or our schema.

  vkcompare.py log TEXT LOG     every line "vkCmd key=value ..." of LOG (what
                                the program logged it passed) is a call of
                                TEXT with exactly those values, in order
  vkcompare.py gfxr TEXT JSON   every call GFXReconstruct recorded of the same
                                run (gfxrecon-convert's JSON lines) is in
                                TEXT, in order, with the same argument values

Names of enums and flags are turned into numbers with the registry
(vk.xml) alone.  Python's standard library only: the text form is parsed
here, not with libyaml.  Exit 0 when everything matched, 1 otherwise, with
one line per mismatch.
"""
import base64
import json
import re
import sys
import xml.etree.ElementTree as ET

REGISTRY = "/usr/share/vulkan/registry/vk.xml"

# The loader calls these through the layers while it enumerates physical
# devices; GFXReconstruct does not record them, we do (the programs
# compared here do not call them).
LOADER_CALLS = {"vkEnumerateDeviceExtensionProperties"}


def registry_values(path):
    """Every enum and flag bit of the registry, name -> value."""
    root = ET.parse(path).getroot()
    vals, aliases = {}, {}

    def add(e, extnumber=None):
        name = e.get("name")
        if e.get("alias"):
            aliases[name] = e.get("alias")
        elif e.get("value") is not None:
            try:
                vals[name] = int(e.get("value").rstrip("ULF"), 0)
            except ValueError:
                pass  # a string constant or an expression: not an enum
        elif e.get("bitpos") is not None:
            vals[name] = 1 << int(e.get("bitpos"))
        elif e.get("offset") is not None:
            n = int(e.get("extnumber") or extnumber)
            v = 1000000000 + (n - 1) * 1000 + int(e.get("offset"))
            vals[name] = -v if e.get("dir") == "-" else v

    for group in root.iter("enums"):
        for e in group.findall("enum"):
            add(e)
    for ext in root.iter("extension"):
        for e in ext.iter("enum"):
            add(e, ext.get("number"))
    for feature in root.iter("feature"):
        for e in feature.iter("enum"):
            add(e)
    for a, b in aliases.items():
        while b in aliases:
            b = aliases[b]
        if b in vals:
            vals[a] = vals[b]
    return vals


class Flow:
    """One line of the text form (YAML flow style) as dicts, lists and
    strings; a quoted string is ("str", s), a tagged value ("tag", tag, v)."""

    def __init__(self, s):
        self.s, self.i = s, 0

    def skip(self):
        while self.i < len(self.s) and self.s[self.i] == " ":
            self.i += 1

    def items(self, close, item):
        self.i += 1
        while True:
            self.skip()
            if self.s[self.i] == close:
                self.i += 1
                return
            item()
            self.skip()
            if self.s[self.i] == ",":
                self.i += 1

    def value(self):
        self.skip()
        c = self.s[self.i]
        if c == "{":
            d = {}

            def pair():
                j = self.s.index(": ", self.i)
                k = self.s[self.i:j]
                self.i = j + 2
                d[k] = self.value()
            self.items("}", pair)
            return d
        if c == "[":
            v = []
            self.items("]", lambda: v.append(self.value()))
            return v
        if c == '"':
            j = self.i + 1
            while self.s[j] != '"':
                j += 2 if self.s[j] == "\\" else 1
            v = ("str", self.s[self.i + 1:j])
            self.i = j + 1
            return v
        if c == "!":
            j = self.s.index(" ", self.i)
            tag = self.s[self.i:j]
            self.i = j
            return ("tag", tag, self.value())
        j = self.i
        while j < len(self.s) and self.s[j] not in ",]}":
            j += 1
        v = self.s[self.i:j].strip()
        self.i = j
        return v


def vulkan_calls(path):
    with open(path) as f:
        for line in f:
            r = Flow(line.strip()).value()
            if r.get("fn", "").startswith("vk"):
                yield r


class Values:
    def __init__(self, vals):
        self.vals = vals

    def number(self, v):
        """A scalar of the text form as a number: decimal, a bool, a float,
        an enum's name or flag names joined by '|'; None if it is none."""
        if not isinstance(v, str):
            return None
        if v in ("true", "false"):
            return int(v == "true")
        if re.fullmatch(r"-?[0-9]+", v):
            return int(v)
        if re.fullmatch(r"-?[0-9]*\.[0-9]+(e[-+]?[0-9]+)?", v):
            return float(v)
        names = v.split("|")
        if all(n in self.vals for n in names):
            n = 0
            for name in names:
                n |= self.vals[name]
            return n
        return None


# --- the program's log ------------------------------------------------------

def find(node, key):
    """The first value named KEY in NODE, depth first (in argument and member
    order); None if there is none."""
    if isinstance(node, dict):
        if key in node:
            return node[key]
        node = list(node.values())
    if isinstance(node, list):
        for v in node:
            got = find(v, key)
            if got is not None:
                return got
    return None


def log_matches(values, call, pairs):
    """Whether CALL has every key=value of PAIRS: numbers in decimal or 0x
    hex; AxBxC is a struct of three members (an extent)."""
    args = call.get("args", {})
    for key, want in pairs:
        got = find(args, key)
        if got is None:
            return False
        if re.fullmatch(r"[0-9]+(x[0-9]+)+", want) and not want.startswith("0x"):
            parts = [int(p) for p in want.split("x")]
            if not isinstance(got, dict) or [values.number(v) for v in got.values()] != parts:
                return False
        elif values.number(got) != int(want, 0):
            return False
    return True


def check_log(text, log, values):
    calls = {}
    for c in vulkan_calls(text):
        calls.setdefault(c["fn"], []).append(c)
    nextcall = {}   # per command, where the next logged line is looked for
    bad = n = 0
    with open(log) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("vk"):
                continue
            n += 1
            name, *rest = line.split(" ")
            pairs = [p.split("=", 1) for p in rest]
            have = calls.get(name, [])
            i = nextcall.get(name, 0)
            while i < len(have) and not log_matches(values, have[i], pairs):
                i += 1
            if i == len(have):
                print("not in the trace: %s" % line)
                bad += 1
            else:
                nextcall[name] = i + 1
    print("%d logged calls, %d found with exactly those values" % (n, n - bad))
    return bad == 0 and n > 0


# --- GFXReconstruct's record of the same run ---------------------------------

class Compare(Values):
    def __init__(self, vals):
        super().__init__(vals)
        self.ours_of = {}   # GFXR's object number -> our handle
        self.errors = []
        self.compared = 0

    def fail(self, where, ours, theirs):
        self.errors.append("%s: %r, GFXReconstruct has %r" % (where, ours, theirs))

    def handle(self, ours, theirs, where):
        # GFXR numbers every object anew; a driver may hand out a freed
        # object's address again: one GFXR object is one handle of ours
        if self.ours_of.setdefault(theirs, ours) != ours:
            self.errors.append("%s: %s, GFXReconstruct's object %s, which was %s" %
                               (where, ours, theirs, self.ours_of[theirs]))

    def same(self, ours, theirs, where):
        if isinstance(ours, list) and not isinstance(theirs, list) and len(ours) == 1:
            ours = ours[0]  # a pointer to one value: GFXR writes the value
        if isinstance(theirs, dict):
            if isinstance(ours, tuple) and ours[:2] == ("tag", "!!binary"):
                return  # a union (VkClearValue): we write its bytes
            if not isinstance(ours, dict):
                return self.fail(where, ours, "a struct")
            for k, v in theirs.items():
                if k not in ours:
                    self.errors.append("%s.%s: missing" % (where, k))
                else:
                    self.same(ours[k], v, where + "." + k)
            return
        if isinstance(theirs, list):
            # fixed-size arrays: GFXR writes the elements in use
            if not isinstance(ours, list) or len(ours) < len(theirs):
                return self.fail(where, ours, theirs)
            for i, v in enumerate(theirs):
                self.same(ours[i], v, "%s[%d]" % (where, i))
            return
        self.compared += 1
        if isinstance(theirs, str) and theirs.startswith("0x"):
            return  # a host pointer: GFXR writes the address, we the contents
        if theirs is None or theirs == "VK_NULL_HANDLE":
            if ours not in ("null", "0x0", "0", []):
                self.fail(where, ours, theirs)
            return
        if isinstance(ours, tuple) and ours[:2] == ("tag", "!!binary"):
            # bytes (a UUID): GFXR writes them as numbers joined by '-'
            if "-".join(str(b) for b in base64.b64decode(ours[2][1])) != theirs:
                self.fail(where, ours, theirs)
            return
        if isinstance(ours, tuple):
            if ours[0] != "str" or ours[1] != theirs:
                self.fail(where, ours, theirs)
            return
        if isinstance(ours, str) and ours.startswith("0x") and isinstance(theirs, int):
            return self.handle(ours, theirs, where)
        if isinstance(theirs, str) and ours == theirs:
            return
        a = self.number(ours)
        b = self.vals.get(theirs) if isinstance(theirs, str) else theirs
        if a is None or b is None or isinstance(b, bool):
            return self.fail(where, ours, theirs)
        if a != b and not (isinstance(a, float) and abs(a - b) <= 1e-6 * max(1.0, abs(b))):
            self.fail(where, ours, theirs)


def gfxr_calls(path):
    with open(path) as f:
        for line in f:
            j = json.loads(line)
            if "vkFunc" in j:
                yield j["vkFunc"]


def check_gfxr(text, gfxr, vals):
    ours = [c for c in vulkan_calls(text) if c["fn"] not in LOADER_CALLS]
    theirs = list(gfxr_calls(gfxr))
    cmp = Compare(vals)
    for i, t in enumerate(theirs):
        if i >= len(ours):
            cmp.errors.append("call %d, %s: not in the trace (it ends)" % (i, t["name"]))
            break
        o = ours[i]
        where = "%s (call %s)" % (o["fn"], o["call"])
        if o["fn"] != t["name"]:
            cmp.errors.append("%s: GFXReconstruct has %s there" % (where, t["name"]))
            break
        cmp.same(o.get("args", {}), t.get("args", {}), where)
        if "return" in t:
            cmp.same(o.get("ret"), t["return"], where + ".ret")
    for o in ours[len(theirs):]:
        cmp.errors.append("%s (call %s): GFXReconstruct did not see it" % (o["fn"], o["call"]))
    for e in cmp.errors[:20]:
        print(e)
    print("%d calls of GFXReconstruct's, %d values compared, %d differ" %
          (len(theirs), cmp.compared, len(cmp.errors)))
    return not cmp.errors and theirs


def main(argv):
    if len(argv) != 4 or argv[1] not in ("log", "gfxr"):
        print("usage: vkcompare.py log TEXT LOG | gfxr TEXT JSON", file=sys.stderr)
        return 2
    vals = registry_values(REGISTRY)
    if argv[1] == "log":
        ok = check_log(argv[2], argv[3], Values(vals))
    else:
        ok = check_gfxr(argv[2], argv[3], vals)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
