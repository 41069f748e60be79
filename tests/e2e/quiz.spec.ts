// Quiz mode: at every stage the result stays hidden until the learner answers; the answer is
// marked against the answer key the CLI prints for the same question set
// (`worksheet --quiz-set N --answers`), then revealed with the worked arithmetic, and the tally
// counts. Answered right by keyboard, wrong with the mouse, embedded, in presenter mode (where
// the teacher reveals with one key), and with the block and a source sentence.
import type { Locator, Page } from "@playwright/test";
import { test, expect, loadTrace, runCli, STAGES, BACKWARD_STAGES } from "./fixtures";


interface KeyEntry {
  stage: number;
  prompt: string;
  answer: string;
}

/** The CLI's answer key for question set `set`: one entry per stage, in order. */
function answerKey(set: number, args: string[] = []): KeyEntry[] {
  const text = runCli(["worksheet", "--quiz-set", String(set), "--answers", ...args]);
  const entries: KeyEntry[] = [];
  for (const block of text.split(/\n(?=\*\*\d+\.\*\* )/).slice(1)) {
    const head = /^\*\*\d+\.\*\* \(Stage (\d+): [^)]*\) (.*)$/m.exec(block);
    const answer = /^\*\*Answer:\*\* (.*)$/m.exec(block);
    if (!head || !answer) throw new Error(`unreadable key entry:\n${block}`);
    entries.push({ stage: Number(head[1]), prompt: head[2], answer: answer[1] });
  }
  return entries;
}

/** What the progress line says at stage `n` of the walk (from 1) when `forward` stages come
 * before the backward ones. */
function progressText(n: number, forward: number): string {
  return n <= forward ? `Stage ${n} of ${forward}` : `Backward ${n - forward} of ${BACKWARD_STAGES.length}`;
}

/** Steps on with Next until the progress line shows stage `n` of the walk: the backward stages
 * the loss does not reach ask nothing, so a quiz skips past them. */
async function stepTo(page: Page, n: number, forward: number): Promise<void> {
  const progress = page.getByTestId("progress");
  for (let i = 0; i < 30 && (await progress.textContent()) !== progressText(n, forward); i++) {
    await page.getByTestId("next").click();
  }
  await expect(progress).toHaveText(progressText(n, forward));
}

const card = (page: Page): Locator => page.getByTestId("quiz");
const hiddenResults = (page: Page): Locator => page.locator(".stage [data-testid^='hidden-']");
const choiceInputs = (page: Page): Locator => card(page).locator("[data-testid^='quiz-choice-']");

/** The names of the card's choices, in order. */
async function choiceNames(page: Page): Promise<string[]> {
  return (await card(page).locator("label.quiz-choice").allTextContents()).map((t) => t.trim());
}

/** Answers right using only the keyboard: type the number, or move to the choices and pick. */
async function answerRightByKeyboard(page: Page, entry: KeyEntry): Promise<void> {
  const number = page.getByTestId("quiz-number");
  if (await number.count()) {
    await number.focus();
    await page.keyboard.type(entry.answer);
    await page.keyboard.press("Enter");
    return;
  }
  const names = await choiceNames(page);
  const first = choiceInputs(page).first();
  const type = await first.getAttribute("type");
  await first.focus();
  if (type === "radio") {
    // Ties accept any of the tied keys: the first one is picked.
    const target = names.indexOf(entry.answer.split(" or ")[0]);
    expect(target, `${entry.answer} among ${names}`).toBeGreaterThanOrEqual(0);
    await page.keyboard.press("Space");
    for (let i = 0; i < target; i++) await page.keyboard.press("ArrowRight");
    await expect(choiceInputs(page).nth(target)).toBeChecked();
    await page.keyboard.press("Tab");
  } else {
    const wanted = entry.answer === "none" ? [] : entry.answer.split(", ");
    for (const name of names) {
      if (wanted.includes(name)) await page.keyboard.press("Space");
      await page.keyboard.press("Tab");
    }
  }
  await expect(page.getByTestId("quiz-check")).toBeFocused();
  await page.keyboard.press("Enter");
}

/** Answers wrong with the mouse; returns what was answered, as the feedback repeats it. */
async function answerWrong(page: Page, entry: KeyEntry): Promise<string> {
  const number = page.getByTestId("quiz-number");
  if (await number.count()) {
    await number.fill(offBy5(entry.answer));
  } else {
    const names = await choiceNames(page);
    const type = await choiceInputs(page).first().getAttribute("type");
    if (type === "radio") {
      const right = entry.answer.split(" or ");
      const wrong = names.findIndex((n) => !right.includes(n));
      await choiceInputs(page).nth(wrong).check();
      await page.getByTestId("quiz-check").click();
      return names[wrong];
    }
    // A set: the empty set when some cells are masked, otherwise the first cell.
    if (entry.answer === "none") await choiceInputs(page).first().check();
    await page.getByTestId("quiz-check").click();
    return entry.answer === "none" ? names[0] : "none";
  }
  await page.getByTestId("quiz-check").click();
  return offBy5(entry.answer);
}

/** A number five away from `answer`, as the key writes it (with a Unicode minus). */
function offBy5(answer: string): string {
  return (Number(answer.replace("−", "-")) + 5).toFixed(2);
}

test("every stage is hidden until answered, and a right answer by keyboard is marked right", async ({
  app,
  page,
  context,
}) => {
  await context.grantPermissions(["clipboard-read", "clipboard-write"]);
  test.slow();
  const key = answerKey(2);
  // Every forward stage, and the backward stages the default goal (a pattern) reaches: not the
  // output projection's or the weighted sum's.
  const reached = [1, 4, 5, 6, 7, 8].map((b) => STAGES.length + b);
  expect(key.map((e) => e.stage)).toEqual([...STAGES.map((_, i) => i + 1), ...reached]);
  await app.goto("./#v=1&quiz=1&qn=2");
  await app.openPlace("share");
  await app.openPlace("lab");
  for (const [i, entry] of key.entries()) {
    if (i > 0 && entry.stage !== key[i - 1].stage + 1) await stepTo(page, entry.stage, STAGES.length);
    await expect(page.getByTestId("progress")).toHaveText(progressText(entry.stage, STAGES.length));
    await expect(page.getByTestId("quiz-prompt")).toHaveText(entry.prompt);
    await expect(hiddenResults(page).first()).toBeVisible();
    await expect(page.getByTestId("stage-note")).toHaveCount(0);
    await expect(page.getByTestId("whatif-lab")).toHaveCount(0);
    await answerRightByKeyboard(page, entry);
    await expect(page.getByTestId("quiz-feedback")).toHaveText(`Right: ${entry.answer}.`);
    await expect(page.getByTestId("quiz-feedback")).toHaveAttribute("data-verdict", "right");
    await expect(page.getByTestId("quiz-tally")).toHaveText(`${i + 1} answered, ${i + 1} right`);
    await expect(page.getByTestId("quiz-worked")).toBeVisible();
    await expect(hiddenResults(page)).toHaveCount(0);
    await expect(page.locator(".stage canvas:not(.given canvas)").first()).toHaveAttribute("data-drawn", "true");
    await expect(page.getByTestId("stage-note")).toHaveCount(1);
    // The cell in question lights up, and the explanation beside the stage explains it too.
    await expect(page.locator(".stage canvas[data-highlight^='cell:']:not([data-highlight^='cell:;'])")).not.toHaveCount(0);
    await expect(page.getByTestId("explain-expansion")).toBeVisible();
    // The focus waits on "Another question" (on the verdict where the stage has no other
    // question); → goes on to the next stage.
    if (await page.getByTestId("quiz-another").isVisible()) {
      await expect(page.getByTestId("quiz-another")).toBeFocused();
    } else {
      await expect(page.getByTestId("quiz-feedback")).toBeFocused();
    }
    await page.keyboard.press("ArrowRight");
  }
  // Going back, an answered stage stays revealed.
  await app.openStage("input");
  await expect(page.getByTestId("quiz-feedback")).toHaveText(`Right: ${key[0].answer}.`);

  // During the quiz, the exported answer key holds the quiz's own questions.
  await app.openExportMenu();
  const exported = await app.downloaded(() => page.getByTestId("export-answer-key").click());
  expect(exported.bytes.toString("utf8").trimEnd()).toBe(
    runCli(["worksheet", "--quiz-set", "2", "--answers"]).trimEnd(),
  );

  await page.getByTestId("quiz-copy").click();
  const line = await page.evaluate(() => navigator.clipboard.readText());
  expect(line).toContain(`attention-lens quiz on “I am hungry”: ${key.length} of ${key.length} right (Input ✓ · Q, K, V ✓ · `);
  expect(line).toContain("quiz=1&qn=2");
  await expect(page.getByTestId("quiz-copy-status")).toHaveText("Result copied.");
  // The note belongs to the copy, not to the next question.
  await app.openStage("projection");
  await expect(page.getByTestId("quiz-feedback")).toHaveText(`Right: ${key[1].answer}.`);
  await expect(page.getByTestId("quiz-copy-status")).toHaveText("");
});

test("a wrong answer shows the right one; another question hides the stage again", async ({ app, page }) => {
  test.slow();
  const key = answerKey(2);
  await app.goto("./#v=1&quiz=1&qn=2");
  for (const [i, entry] of key.entries()) {
    if (i > 0) await stepTo(page, entry.stage, STAGES.length);
    await expect(page.getByTestId("quiz-prompt")).toHaveText(entry.prompt);
    const given = await answerWrong(page, entry);
    await expect(page.getByTestId("quiz-feedback")).toHaveText(
      `Not quite: you answered ${given}; the answer is ${entry.answer}.`,
    );
    await expect(page.getByTestId("quiz-feedback")).toHaveAttribute("data-verdict", "wrong");
    await expect(page.getByTestId("quiz-tally")).toHaveText(`${i + 1} answered, 0 right`);
    await expect(page.getByTestId("quiz-worked")).toBeVisible();
    await expect(hiddenResults(page)).toHaveCount(0);
  }
  // Another question: the next set, in the link, with the stage hidden again.
  const next = answerKey(3);
  await page.getByTestId("quiz-another").click();
  await expect(page.getByTestId("quiz-prompt")).toHaveText(next[key.length - 1].prompt);
  await expect(hiddenResults(page).first()).toBeVisible();
  await expect(page).toHaveURL(/quiz=1&qn=3/);
  // An unreadable number is refused next to the field, and nothing is counted.
  await app.openStage("input");
  await page.getByTestId("quiz-another").click();
  await expect(page).toHaveURL(/qn=4/);
  await page.getByTestId("quiz-number").fill("one half");
  await page.getByTestId("quiz-check").click();
  await expect(page.getByTestId("quiz-error")).toContainText("is not a number");
  await expect(page.getByTestId("quiz-tally")).toHaveText(`${key.length} answered, 0 right`);
  await expect(hiddenResults(page).first()).toBeVisible();
});

test("Quiz me turns the quiz on and off, and new numbers hide every answer again", async ({ app, page }) => {
  await app.goto("./#v=1&stage=scores");
  await app.openPlace("inputs");
  await app.openPlace("share");
  await expect(page.getByTestId("quiz")).toHaveCount(0);
  await page.getByTestId("quiz-me").click();
  await expect(page.getByTestId("quiz-me")).toHaveAttribute("aria-pressed", "true");
  await expect(page).toHaveURL(/quiz=1/);
  await expect(hiddenResults(page)).toHaveCount(2);
  const entry = answerKey(1)[3];
  await expect(page.getByTestId("quiz-prompt")).toHaveText(entry.prompt);
  await answerRightByKeyboard(page, entry);
  await expect(page.getByTestId("quiz-feedback")).toHaveAttribute("data-verdict", "right");
  // A new temperature changes the numbers: the stage asks again, the tally stays.
  await page.getByTestId("temperature").fill("2");
  await page.getByTestId("temperature").press("Enter");
  await expect(hiddenResults(page).first()).toBeVisible();
  await expect(page.getByTestId("quiz-tally")).toHaveText("1 answered, 1 right");
  await page.getByTestId("quiz-me").click();
  await expect(page.getByTestId("quiz")).toHaveCount(0);
  await expect(hiddenResults(page)).toHaveCount(0);
  await expect(page).not.toHaveURL(/quiz=/);
});

test("in a compact embed the quiz asks and reveals too", async ({ app, page }) => {
  const entry = answerKey(1)[6];
  await app.goto("./?embed=1&controls=0#v=1&quiz=1&stage=softmax");
  await expect(page.getByTestId("quiz-prompt")).toHaveText(entry.prompt);
  await expect(hiddenResults(page)).toHaveCount(1);
  await answerRightByKeyboard(page, entry);
  await expect(page.getByTestId("quiz-feedback")).toHaveText(`Right: ${entry.answer}.`);
  await expect(page.locator(".stage canvas:not(.given canvas)")).toHaveCount(1);
});

test("?quiz=1 on the page address starts the quiz", async ({ app, page }) => {
  await app.goto("./?embed=1&quiz=1#v=1&stage=mask");
  await expect(page.getByTestId("quiz-prompt")).toHaveText(answerKey(1)[5].prompt);
});

test("presenting, the teacher reveals with R or the clicker, and the tally is the class's own", async ({
  app,
  page,
}) => {
  const key = answerKey(1);
  await app.goto("./?present=1#v=1&quiz=1");
  await expect(page.getByTestId("presenter-bar")).toContainText("R: reveal");
  await expect(page.getByTestId("quiz-prompt")).toHaveText(key[0].prompt);
  await expect(page.getByTestId("quiz-form")).toHaveCount(0);
  await expect(hiddenResults(page)).toHaveCount(1);
  await page.keyboard.press("r");
  await expect(page.getByTestId("quiz-feedback")).toHaveText(`The answer is ${key[0].answer}.`);
  await expect(hiddenResults(page)).toHaveCount(0);
  // The answer's cell is outlined, so the class sees which number it is, and no sheet covers
  // the step.
  const [, token, dim] = /X\[(\w+), d(\d+)\]/.exec(key[0].prompt)!;
  const at = `${["I", "am", "hungry"].indexOf(token)},${Number(dim) - 1}`;
  await expect(page.getByTestId("canvas-x")).toHaveAttribute("data-highlight", new RegExp(`^cell:${at};`));
  await expect(page.locator(".explain-panel:visible")).toHaveCount(0);
  await expect(page.getByTestId("quiz-tally")).toHaveText("0 answered, 0 right");
  // The clicker's Next steps on, then first reveals, then steps.
  await page.keyboard.press("PageDown");
  await expect(page.getByTestId("stage-title")).toHaveText("Projections Q, K, V");
  await expect(hiddenResults(page)).toHaveCount(1);
  // The step shows Q alone, so the question is about Q.
  await expect(page.getByTestId("presenter-head")).toHaveText("Queries: Q = X·W_q");
  await expect(page.getByTestId("quiz-prompt")).toContainText("What is Q[");
  await page.keyboard.press("PageDown");
  await expect(page.getByTestId("quiz-feedback")).toContainText("The answer is ");
  await page.keyboard.press("PageDown");
  await expect(page.getByTestId("presenter-head")).toHaveText("Keys: K = X·W_k");
  // K's step asks about K in its turn, behind its own hidden result.
  await expect(page.getByTestId("quiz-prompt")).toContainText("What is K[");
  await expect(hiddenResults(page)).toHaveCount(1);
  // Choices are listed for the class to guess from; the Reveal button works as R does.
  const title = page.getByTestId("stage-title");
  for (let presses = 0; presses < 12 && (await title.textContent()) !== "Scores QₕKₕᵀ"; presses++) {
    const before = await page.getByTestId("presenter-bar").getAttribute("data-step");
    const hidden = await hiddenResults(page).count();
    await page.keyboard.press("PageDown");
    if (hidden) await expect(hiddenResults(page)).toHaveCount(0);
    else await expect(page.getByTestId("presenter-bar")).not.toHaveAttribute("data-step", before ?? "");
  }
  // The step shows head 1, so the question is about head 1, whichever head the set drew.
  await expect(page.getByTestId("presenter-head")).toHaveText("Head 1 of 2");
  await expect(page.getByTestId("quiz-prompt")).toHaveText(key[3].prompt.replace(/^In head \d+/, "In head 1"));
  await expect(card(page).locator(".quiz-options li")).toHaveText(["I", "am", "hungry"]);
  const row = loadTrace().heads[0].scores[0] as number[];
  const top = ["I", "am", "hungry"][row.indexOf(Math.max(...row))];
  await page.getByTestId("quiz-reveal").click();
  await expect(page.getByTestId("quiz-feedback")).toHaveText(`The answer is ${top}.`);
});

test("with the block and a source, every stage asks and marks its own question", async ({ app, page }) => {
  // Seventeen forward stages and six backward ones, each answered and revealed.
  test.slow();
  const args = ["--source", "le chat noir", "--block", "--norm", "pre"];
  const key = answerKey(5, args);
  expect(key).toHaveLength(23);
  await app.goto("./#v=1&src=le%20chat%20noir&blk=1&norm=pre&quiz=1&qn=5");
  for (const [i, entry] of key.entries()) {
    if (i > 0) await stepTo(page, entry.stage, 17);
    await expect(page.getByTestId("quiz-prompt")).toHaveText(entry.prompt);
    await expect(hiddenResults(page).first()).toBeVisible();
    await answerRightByKeyboard(page, entry);
    await expect(page.getByTestId("quiz-feedback")).toHaveText(`Right: ${entry.answer}.`);
  }
  await expect(page.getByTestId("quiz-tally")).toHaveText("23 answered, 23 right");
});

for (const viewport of [
  { width: 1920, height: 1080 },
  { width: 1024, height: 768 },
]) {
  test(`presenting at ${viewport.width}×${viewport.height}, every step asks only about what it shows, and the revealed step still fits`, async ({ app, page }) => {
    await page.setViewportSize(viewport);
    await app.goto("./?present=1#v=1&quiz=1&s=the%20cat%20sat");
    const bar = page.getByTestId("presenter-bar");
    const seen = new Set<string>();
    let choicesChecked = 0;
    for (let presses = 0; presses < 40; presses++) {
      const step = (await bar.getAttribute("data-step")) ?? "";
      const prompt = page.getByTestId("quiz-prompt");
      if (!seen.has(step) && (await prompt.count()) > 0) {
        seen.add(step);
        const text = (await prompt.textContent()) ?? "";
        const cell = text.match(/What is (\S+?)\[/);
        if (cell) {
          const titles = await page
            .locator(".stage .heatmap-title:visible, .stage .hidden-title:visible")
            .evaluateAll((els) => els.map((e) => (e.firstChild?.textContent ?? e.textContent ?? "").trim()));
          expect(titles.some((t) => t.startsWith(cell[1])), `${step}: "${text}" asks about a matrix on screen (${titles.join(", ")})`).toBe(true);
        }
        // Choices are set apart, not run together.
        const options = card(page).locator(".quiz-options li");
        if ((await options.count()) > 1) {
          choicesChecked += 1;
          const boxes = await options.evaluateAll((els) => els.map((e) => e.getBoundingClientRect()));
          for (let i = 1; i < boxes.length; i++) {
            if (Math.abs(boxes[i].top - boxes[i - 1].top) < 2) expect(boxes[i].left - boxes[i - 1].right, "a gap between choices").toBeGreaterThanOrEqual(6);
          }
          expect(await options.first().evaluate((e) => getComputedStyle(e).listStyleType)).toBe("none");
        }
        const head = text.match(/head (\d+)/i);
        if (head) {
          await expect(page.getByTestId("presenter-head"), `${step}: "${text}" is about the head shown`).toHaveText(new RegExp(`^Head ${head[1]} of`));
        }
      }
      if (step.startsWith("output")) break;
      const hidden = await hiddenResults(page).count();
      await page.keyboard.press("PageDown");
      if (hidden) {
        await expect(hiddenResults(page)).toHaveCount(0);
        // Revealed, the step still fits the window: its last picture's bottom is on screen.
        await expect.poll(async () => page.locator(".stage canvas").last().evaluate((c) => c.getBoundingClientRect().bottom)).toBeLessThanOrEqual(viewport.height);
      } else {
        await expect(bar).not.toHaveAttribute("data-step", step);
      }
    }
    expect(seen.size, "the walk reached the output").toBeGreaterThan(9);
    expect(choicesChecked, "some step listed choices").toBeGreaterThan(0);
  });
}

test("on the way back the quiz asks which way a step moves a weight, and a task reaches every stage", async ({
  app,
  page,
}) => {
  // A pattern goal: the projections' question is about W_q or W_k, marked by the CLI's key.
  const key = answerKey(1, ["--causal"]);
  const projection = key.find((e) => e.stage === STAGES.length + 7);
  expect(projection?.prompt).toMatch(/^If W_[qk] learned by plain gradient descent.*move W_[qk]\[/);
  await app.goto("./#v=1&causal=1&quiz=1&stage=back-projection");
  await app.openPlace("train");
  await expect(page.getByTestId("quiz-prompt")).toHaveText(projection!.prompt);
  await expect(hiddenResults(page).first()).toBeVisible();
  expect(await choiceNames(page)).toEqual(["up", "down", "stay the same"]);
  await answerRightByKeyboard(page, projection!);
  await expect(page.getByTestId("quiz-feedback")).toHaveText(`Right: ${projection!.answer}.`);
  // The worked arithmetic is the gradient cell's chain rule, and says the step goes against it.
  await expect(page.getByTestId("quiz-worked")).toContainText("∂L/∂W_");
  await expect(page.getByTestId("quiz-worked")).toContainText("against this gradient");
  // A stage the pattern loss does not reach asks nothing and hides nothing.
  await app.openStage("back-output");
  await expect(page.getByTestId("quiz-prompt")).toHaveText(
    "No question here: the pattern loss reads only the attention weights A, so no gradient reaches Y, W_o or C: ∂L/∂W_o and ∂L/∂C are exactly 0.",
  );
  await expect(page.getByTestId("quiz-form")).toHaveCount(0);
  await expect(hiddenResults(page)).toHaveCount(0);
  // A new goal makes new answers: the revealed stage is hidden again, and a task's loss
  // reaches the output projection, which asks about W_o.
  await app.openStage("back-projection");
  await expect(page.getByTestId("quiz-feedback")).toContainText("Right");
  await page.getByTestId("train-goal").selectOption("copy_previous");
  await expect(hiddenResults(page).first()).toBeVisible();
  await expect(page.getByTestId("quiz-tally")).toHaveText("1 answered, 1 right");
  await app.openStage("back-output");
  await expect(page.getByTestId("quiz-prompt")).toContainText("If W_o learned by plain gradient descent");
  await expect(hiddenResults(page).first()).toBeVisible();
});

test("presenting a backward stage at 1024×768, the question is about the head on show and the reveal fits", async ({
  app,
  page,
}) => {
  await page.setViewportSize({ width: 1024, height: 768 });
  await app.goto("./?present=1#v=1&quiz=1&qn=3&stage=back-softmax&s=the%20cat%20sat");
  await expect(page.getByTestId("quiz-prompt")).toContainText("∂L/∂M");
  const prompt = (await page.getByTestId("quiz-prompt").textContent()) ?? "";
  const head = prompt.match(/∂L\/∂M([₁₂₃₄₅₆₇₈])/);
  expect(head, prompt).not.toBeNull();
  const n = "₁₂₃₄₅₆₇₈".indexOf(head![1]) + 1;
  await expect(page.getByTestId("presenter-head")).toHaveText(new RegExp(`^Head ${n} of`));
  await expect(card(page).locator(".quiz-options li")).toHaveText(["positive", "negative", "0"]);
  await expect(hiddenResults(page)).toHaveCount(1);
  await page.keyboard.press("r");
  await expect(page.getByTestId("quiz-feedback")).toContainText("The answer is ");
  await expect(hiddenResults(page)).toHaveCount(0);
  await expect
    .poll(async () => page.locator(".stage canvas").last().evaluate((c) => c.getBoundingClientRect().bottom))
    .toBeLessThanOrEqual(768);
});

// A task's goal reaches every weight; a pattern's leaves W_v unreached, which the projections'
// step says in a line of its own under the pictures.
for (const goal of ["copy_first", "previous"]) {
  test(`presenting the backward pass at 1024×768 with the goal ${goal}, every revealed answer leaves the step on one screen, its cells 24 px tall`, async ({ app, page }) => {
    await page.setViewportSize({ width: 1024, height: 768 });
    await app.goto(`./?present=1#v=1&quiz=1&stage=back-loss&goal=${goal}`);
    const bar = page.getByTestId("presenter-bar");
    let revealed = 0;
    for (let presses = 0; presses < 20; presses++) {
      const step = (await bar.getAttribute("data-step")) ?? "";
      await expect(page.getByTestId("stage-title")).toBeVisible();
      if ((await hiddenResults(page).count()) > 0) {
        await page.keyboard.press("r");
        await expect(hiddenResults(page)).toHaveCount(0);
        await expect(page.getByTestId("quiz-worked")).toBeVisible();
        revealed += 1;
        await expect
          .poll(() => page.evaluate(() => document.documentElement.scrollHeight), { message: `${step}: no scrolling` })
          .toBeLessThanOrEqual(768);
        await expect
          .poll(() => page.locator(".stage canvas").last().evaluate((c) => c.getBoundingClientRect().bottom), { message: `${step}: the last picture on screen` })
          .toBeLessThanOrEqual(768);
        // Three tokens and d_model 4 leave room for cells 24 px tall beside the worked answer.
        await expect(page.locator(".stage canvas").first()).toHaveAttribute("data-drawn", "true");
        const cells = await page.locator(".stage canvas").evaluateAll((els) =>
          els.map((el) => (Number((el.getAttribute("data-grid") ?? "").split(",")[3]) * el.getBoundingClientRect().width) / Number(el.getAttribute("data-width"))),
        );
        expect(Math.min(...cells), `${step}: cell height`).toBeGreaterThanOrEqual(23.5);
      }
      if (step.startsWith("back-input")) break;
      await page.keyboard.press("ArrowRight");
      await expect(bar).not.toHaveAttribute("data-step", step);
    }
    expect(revealed, "answers revealed on the way back").toBeGreaterThanOrEqual(goal === "previous" ? 5 : 7);
  });
}

test("presenting a head's two gradients at 1024×768 with eight tokens and a source, they sit side by side and the reveal fits", async ({
  app,
  page,
}) => {
  await page.setViewportSize({ width: 1024, height: 768 });
  const sentence = encodeURIComponent("the quick brown fox jumps over lazy dogs");
  const source = encodeURIComponent("le renard brun saute");
  // On the way back through the scores, a head's ∂L/∂Qₕ and its ∂L/∂Kₕ are steps of their own,
  // each with its own question about the gradient on show.
  await app.goto(`./?present=1#v=1&quiz=1&blk=1&goal=copy_first&stage=back-scores&s=${sentence}&src=${source}`);
  const bar = page.getByTestId("presenter-bar");
  for (const [step, label, shown] of [
    ["back-scores-0", "∂L/∂Q₁: 1 of 4", "d_q-h0"],
    ["back-scores-1", "∂L/∂K₁: 2 of 4", "d_k-h0"],
  ]) {
    await expect(bar).toHaveAttribute("data-step", step);
    await expect(page.getByTestId("presenter-head")).toHaveText(label);
    await expect(page.locator(".stage-body > .line")).toHaveCount(1);
    await expect(hiddenResults(page)).toHaveCount(1);
    await expect(page.getByTestId(`hidden-${shown}`)).toBeVisible();
    // The ∂L/∂S₁ both products read, which a worked answer uses, is on screen.
    await expect(page.getByTestId("canvas-d_scores-h0")).toBeVisible();
    await expect(page.getByTestId("quiz-prompt")).toContainText(label.split(":")[0]);
    await page.keyboard.press("r");
    await expect(page.getByTestId(`canvas-${shown}`)).toBeVisible();
    await expect
      .poll(() => page.evaluate(() => document.documentElement.scrollHeight), { message: `${step}: no scrolling` })
      .toBeLessThanOrEqual(768);
    await page.keyboard.press("ArrowRight");
  }
  for (const stage of ["back-weighted-sum"]) {
    await app.goto(`./?present=1#v=1&quiz=1&blk=1&goal=copy_first&stage=${stage}&s=${sentence}&src=${source}`);
    await expect(page.locator(".stage canvas").first()).toHaveAttribute("data-drawn", "true");
    await expect(hiddenResults(page)).toHaveCount(2);
    await page.keyboard.press("r");
    await expect(hiddenResults(page)).toHaveCount(0);
    await expect(page.getByTestId("quiz-worked")).toBeVisible();
    // The two equations share one row: before, one under the other, the step ran below the
    // screen even at the smallest zoom.
    const lines = page.locator(".stage-body > .line");
    await expect(lines).toHaveCount(2);
    await expect
      .poll(async () => {
        const [a, b] = await lines.evaluateAll((ls) => ls.map((l) => l.getBoundingClientRect()));
        return Math.abs(a.top - b.top) < 1 && b.left >= a.right;
      }, { message: `${stage}: side by side` })
      .toBe(true);
    await expect
      .poll(() => page.evaluate(() => document.documentElement.scrollHeight), { message: `${stage}: no scrolling` })
      .toBeLessThanOrEqual(768);
    await expect
      .poll(() => page.locator(".stage canvas").last().evaluate((c) => c.getBoundingClientRect().bottom))
      .toBeLessThanOrEqual(768);
  }
});

test("presenting, every step of a stage shown in parts asks its own question, going forward too", async ({ app, page }) => {
  await page.setViewportSize({ width: 1920, height: 1080 });
  const bar = page.getByTestId("presenter-bar");
  const prompt = page.getByTestId("quiz-prompt");
  await app.goto("./?present=1#v=1&quiz=1&stage=projection");
  const prompts: string[] = [];
  for (const step of ["projection-0", "projection-1", "projection-2"]) {
    await expect(bar).toHaveAttribute("data-step", step);
    // The step's result waits behind its question until the class has guessed.
    await expect(hiddenResults(page)).toHaveCount(1);
    prompts.push((await prompt.textContent()) ?? "");
    await page.keyboard.press("ArrowRight");
    await expect(page.getByTestId("quiz-feedback")).toContainText("The answer is");
    await expect(hiddenResults(page)).toHaveCount(0);
    await page.keyboard.press("ArrowRight");
  }
  // Each question is about the matrix its step shows: Q, then K, then V.
  expect(prompts[0]).toMatch(/\bQ\[/);
  expect(prompts[1]).toMatch(/\bK\[/);
  expect(prompts[2]).toMatch(/\bV\[/);
  // And each draws its own cell rather than asking one row and column three times.
  const cells = prompts.map((p) => p.match(/\b[QKV](\[[^\]]*\])/)?.[1]);
  expect(new Set(cells).size).toBeGreaterThan(1);
  // Going back, each step keeps its revealed answer.
  await expect(bar).toHaveAttribute("data-step", "split-0");
  await page.keyboard.press("ArrowLeft");
  await expect(bar).toHaveAttribute("data-step", "projection-2");
  await expect(hiddenResults(page)).toHaveCount(0);
  await expect(prompt).toHaveText(prompts[2]);

  // On the way back, ∂L/∂C asks after ∂L/∂W_o was revealed.
  await app.goto("./?present=1#v=1&quiz=1&stage=back-output&goal=copy_first");
  await expect(prompt).toContainText("W_o[");
  await page.keyboard.press("ArrowRight");
  await expect(page.getByTestId("quiz-feedback")).toContainText("The answer is");
  await page.keyboard.press("ArrowRight");
  await expect(bar).toHaveAttribute("data-step", "back-output-1");
  await expect(prompt).toContainText("∂L/∂C[");
  await expect(hiddenResults(page)).toHaveCount(1);
});

test("presenting at 1024×768, the bar keeps its height while a question hides the step and after the reveal", async ({ app, page }) => {
  await page.setViewportSize({ width: 1024, height: 768 });
  await app.goto("./?present=1#v=1&quiz=1&stage=softmax");
  const bar = page.getByTestId("presenter-bar");
  const training = page.getByTestId("presenter-training");
  // The training buttons keep their place, unseen and out of reach, while the result is hidden.
  await expect(training).toHaveCount(1);
  await expect(training).toBeHidden();
  await expect(hiddenResults(page)).toHaveCount(1);
  const asked = (await bar.boundingBox())!.height;
  await page.keyboard.press("r");
  await expect(training).toBeVisible();
  expect((await bar.boundingBox())!.height).toBe(asked);
  await page.getByTestId("quiz-another").click();
  await expect(hiddenResults(page)).toHaveCount(1);
  await expect(training).toBeHidden();
  expect((await bar.boundingBox())!.height).toBe(asked);
});

test("presenting with the quiz, a revealed step trains on: the answer follows the numbers and the buttons stay", async ({ app, page }) => {
  await page.setViewportSize({ width: 1920, height: 1080 });
  await app.goto("./?present=1#v=1&quiz=1&stage=softmax&goal=previous");
  await page.keyboard.press("r");
  const feedback = page.getByTestId("quiz-feedback");
  await expect(feedback).toHaveText("The answer is 0.46.");
  await expect(page.getByTestId("quiz-prompt")).toContainText("most weight to “hungry”");
  const run = page.getByTestId("train-run");
  await run.click();
  // Each step's new numbers leave the answer revealed, so the run and its buttons go on.
  await expect
    .poll(async () => Number((await page.getByTestId("train-status").textContent())?.match(/After (\d+) steps/)?.[1] ?? 0))
    .toBeGreaterThan(100);
  await expect(hiddenResults(page)).toHaveCount(0);
  await expect(page.getByTestId("presenter-training")).toBeVisible();
  await expect(run).toHaveText("Pause");
  await run.click();
  await expect(run).toHaveText("Train");
  // The head learned to look one back: the card asks and answers on the numbers on screen.
  await expect(page.getByTestId("quiz-prompt")).toContainText("most weight to “I”");
  await expect(feedback).toHaveText(/^The answer is (0\.9\d|1\.00)\.$/);
  // Numbers a run did not write (Reset's) hide the answer again.
  await page.getByTestId("train-reset").click();
  await expect(hiddenResults(page).first()).toBeVisible();
});

test("presenting at 1024×768, a long revealed sum scrolls within its box and the step stays on one screen", async ({ app, page }) => {
  await page.setViewportSize({ width: 1024, height: 768 });
  await app.goto(
    "./?present=1#v=1&quiz=1&s=the%20quick%20brown%20fox%20jumps%20over%20lazy%20dogs" +
      "&src=le%20chat%20noir%20dort%20sur%20le%20tapis%20rouge&blk=1&goal=copy_first&stage=softmax",
  );
  await expect(page.getByTestId("presenter-bar")).toHaveAttribute("data-step", "softmax-0");
  // Next reveals the first head's answer, then steps to the second head.
  await page.keyboard.press("ArrowRight");
  await expect(hiddenResults(page)).toHaveCount(0);
  await page.keyboard.press("ArrowRight");
  await expect(page.getByTestId("presenter-bar")).toHaveAttribute("data-step", "softmax-1");
  await page.keyboard.press("r");
  const worked = page.getByTestId("quiz-worked");
  await expect(worked).toContainText("exp(");
  // Eight keys and a note on the rounding: more than the box shows, so it scrolls, by keyboard too.
  const [scroll, client] = await worked.evaluate((w) => [w.scrollHeight, w.clientHeight]);
  expect(scroll).toBeGreaterThan(client);
  await expect(worked).toHaveAttribute("tabindex", "0");
  await expect
    .poll(() => page.evaluate(() => document.documentElement.scrollHeight), { message: "the page's height" })
    .toBeLessThanOrEqual(768);
});

test("Another question never asks the question just asked again, and is not offered where there is none", async ({ app, page }) => {
  // Presenting, R reveals the answer, and Another question is offered once the answer is out.
  await app.goto("./?present=1#v=1&quiz=1&stage=softmax");
  const prompt = page.getByTestId("quiz-prompt");
  await expect(prompt).toBeVisible();
  let last = (await prompt.textContent()) ?? "";
  for (let i = 0; i < 8; i++) {
    await page.keyboard.press("r");
    await page.getByTestId("quiz-another").click();
    await expect(prompt, `press ${i + 1}`).not.toHaveText(last);
    last = (await prompt.textContent()) ?? "";
  }
  // Scale asks for its divisor whatever the question set: no other question to offer.
  await app.goto("./?present=1#v=1&quiz=1&stage=scale");
  await expect(prompt).toHaveText("What is every score divided by here, to two decimals?");
  await page.keyboard.press("r");
  await expect(page.getByTestId("quiz-feedback")).toContainText("The answer is");
  await expect(page.getByTestId("quiz-another")).toBeHidden();
});
