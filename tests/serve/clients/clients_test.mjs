// LibreTranslate clients from npm, used as their READMEs say, against `attn serve`: each must get
// the translation that attn's own /v1 API gives for the same sentence.
//   node clients_test.mjs --attn BIN --model SRC-TGT=DIR --source SRC --target TGT --text "..."
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

const arg = (name) => {
  const i = process.argv.indexOf(name);
  if (i < 0 || i + 1 >= process.argv.length) throw new Error(`missing ${name}`);
  return process.argv[i + 1];
};
const [bin, model, source, target, text] = ["--attn", "--model", "--source", "--target", "--text"].map(arg);
const fail = (message) => {
  console.error(`clients_test: FAILED: ${message}`);
  process.exitCode = 1;
};

let lt, translate;
try {
  lt = await import("libretranslate");
  translate = (await import("translate")).default;
} catch (e) {
  console.error(`clients_test: FAILED: the npm clients are not installed (run scripts/setup, or npm ci in ${import.meta.dirname}): ${e.message}`);
  process.exit(1);
}

const server = spawn(bin, ["serve", "--model", model, "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
const timer = setTimeout(() => {
  console.error("clients_test: FAILED: timed out after 120 s");
  server.kill("SIGKILL");
  process.exit(1);
}, 120000);
const line = await new Promise((resolve, reject) => {
  createInterface({ input: server.stdout }).once("line", resolve);
  server.once("exit", (code) => reject(new Error(`attn serve exited with ${code}`)));
});
const url = line.replace(/^listening on /, "");
try {
  const reply = await fetch(`${url}/v1/translate`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ model: `${source}-${target}`, q: text }),
  });
  const expected = (await reply.json()).translations[0].text;
  if (!expected) fail("the /v1 API gave no translation");

  // libretranslate (npm): translate({query, source, target, apiurl}) -> translatedText
  const a = await lt.translate({ query: text, source, target, apiurl: url });
  if (a !== expected) fail(`libretranslate gave ${JSON.stringify(a)}, expected ${JSON.stringify(expected)}`);
  else console.log(`libretranslate@1.0.1: ${a}`);

  // libretranslate (npm) without a source: its default, "auto", detected by the server. The text
  // is English enough for the detector (the served model's own words are not); its translation is
  // what /v1 gives for the same line.
  const english = "In the beginning God created the heaven and the earth.";
  const v1 = await fetch(`${url}/v1/translate`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ model: `${source}-${target}`, q: english }),
  });
  const expectedAuto = (await v1.json()).translations[0].text;
  const auto = await lt.translate({ query: english, target, apiurl: url });
  if (auto !== expectedAuto)
    fail(`libretranslate (source auto) gave ${JSON.stringify(auto)}, expected ${JSON.stringify(expectedAuto)}`);
  else console.log(`libretranslate@1.0.1, source auto: ${auto}`);

  // libretranslate (npm) with format "html": the markup comes back around the translation.
  const html = await lt.translate({ query: `<p>${text}</p>`, source, target, format: "html", apiurl: url });
  if (html !== `<p>${expected}</p>`)
    fail(`libretranslate (html) gave ${JSON.stringify(html)}, expected ${JSON.stringify(`<p>${expected}</p>`)}`);
  else console.log(`libretranslate@1.0.1, format html: ${html}`);

  // translate (npm), its "libre" engine pointed at this server.
  translate.engine = "libre";
  translate.url = `${url}/translate`;
  translate.key = "unused";
  const b = await translate(text, { from: source, to: target });
  if (b !== expected) fail(`translate gave ${JSON.stringify(b)}, expected ${JSON.stringify(expected)}`);
  else console.log(`translate@3.1.0 (engine libre): ${b}`);
} catch (e) {
  fail(e.stack || String(e));
}
server.kill("SIGTERM");
const code = await new Promise((resolve) => server.once("exit", resolve));
if (code !== 0) fail(`attn serve exited with ${code} after SIGTERM`);
clearTimeout(timer);
