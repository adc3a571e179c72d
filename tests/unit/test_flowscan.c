/*
 * Unit tests of the text form's own line scanner (lib/stream/flowscan.c):
 * the lines it takes give libyaml's events, and it leaves to libyaml
 * what it does not take whole, by the harness of unit.h.
 */
#include "flowscan_agree.h"
#include "unit.h"

#include <stdlib.h>

static void taken(const char *line)
{
	char why[512] = "";
	int rc = flowscan_agree(line, strlen(line), why, sizeof(why));
	check(rc == 1, "%s: %s", line, rc == 0 ? "left to libyaml" : why);
}

static void left(const char *line)
{
	char why[512] = "";
	int rc = flowscan_agree(line, strlen(line), why, sizeof(why));
	check(rc == 0, "%s: taken, %s", line, rc == 1 ? "should be libyaml's" : why);
}

int main(void)
{
	/* what the writer writes */
	taken("{call: 0, thread: 0, fn: tracekit.setup.begin}");
	taken("{call: 2, thread: 1, fn: vkEnumeratePhysicalDevices, args: {instance: "
	      "0x560648109e70, pPhysicalDeviceCount: [1], pPhysicalDevices: null}, ret: VK_SUCCESS}");
	taken("{a: VK_IMAGE_USAGE_TRANSFER_SRC_BIT|VK_IMAGE_USAGE_COLOR_ATTACHMENT_BIT, b: -1, "
	      "c: 1.5e-07, d: -.inf, e: .nan, f: true, g: ~}");
	taken("{data: !!binary \"AACAPwAAgD8=\", s: !latin1 \"caf\\xe9\", t: ! \"x\"}");
	taken("{name: \"tab\\there, quote \\\" backslash \\\\ nul \\0 bell \\a esc \\e sp \\ \"}");
	taken("{u: \"\\u00e9\\U0001F600\\x41\", empty: \"\", e2: [], e3: {}}");
	taken("{nested: [[1, [2, {a: [3]}]], {b: {c: {d: !t [4, 5]}}}], x: !m {y: 1}}");
	taken("   {  spaced:  1 ,  b:   [ 1 ,2 ]  }   ");
	left("{a : 1}");
	taken("{k: [a, -b, +c, 0x1f, (x), a/b, 1e+3]}");
	taken("{v: !struct:VkOffset2D {x: 1, y: !sint -2}, e: !enum VK_X=1000150000, m: !bitmask VK_A|0x40}");
	/* what libyaml reads, or refuses, in its own words */
	left("[1, 2]");
	left("{a: &x 1, b: *x}");
	left("{a: 'single'}");
	left("{a: 1} # comment");
	left("{a: two words}");
	left("{a: 1,}");
	left("{a: , b: 1}");
	left("{a:1}");
	left("{a: \"caf\xc3\xa9\"}");
	left("{a: \"\\/\"}");
	left("{a: \"\\N\"}");
	left("{a: \"\\ud800\"}");
	left("{a: \"\\x4\"}");
	left("{a: \"tab\there\"}");
	left("{a: \"open}");
	left("{a: 1} {b: 2}");
	left("{a: [1: 2]}");
	left("{\"a\": 1}");
	left("{a: !<tag:x> 1}");
	left("{a: !!x,y 1}");
	left("{a: !! 1}");
	left("{a: -}");
	left("{a: |x}");
	left("{a: 1");
	left("{? a : 1}");
	left("--- {a: 1}");
	/* deeper than the scanner goes */
	char deep[1200];
	size_t n = 0;
	n += (size_t)sprintf(deep + n, "{a: ");
	for (int i = 0; i < 300; i++)
		deep[n++] = '[';
	for (int i = 0; i < 300; i++)
		deep[n++] = ']';
	deep[n++] = '}';
	deep[n] = 0;
	left(deep);
	return unit_done("test_flowscan");
}
