#!/usr/bin/env python3
"""Headless-browser test of the web app served at /app/ (run by scripts/browser-test).

Scenario 1: a guest sets a profile, swipes 12 cards online (buttons, arrow keys, a pointer
drag), answers a feedback prompt, swipes 3 more offline, comes back online, and the server
then counts 15 swipes. Scenario 2: two guests in two browsers create and join a group, like
the same option and both see the match, pushed over the group's event stream.

Selenium 4 and headless Chromium at 390×844; every wait is explicit and bounded.
"""

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import TimeoutException, WebDriverException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import Select, WebDriverWait

WAIT = 15          # seconds for an ordinary UI step
SYNC_WAIT = 40     # seconds for the offline queue to flush (backoff plus the online event)


class Failure(Exception):
    pass


class Run:
    def __init__(self, args):
        self.args = args
        self.artifacts = os.path.join(os.environ.get("SWIPERANK_ARTIFACTS", "artifacts"), "browser")
        os.makedirs(self.artifacts, exist_ok=True)
        self.shots = 0
        self.steps = []
        self.drivers = []

    # --- browsers --------------------------------------------------------------------------

    def browser(self, label):
        options = webdriver.ChromeOptions()
        chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
        if chromium:
            options.binary_location = chromium
        for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                     "--window-size=390,844", "--no-first-run", "--disable-extensions"):
            options.add_argument(flag)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        driver_path = shutil.which("chromedriver")
        service = webdriver.ChromeService(executable_path=driver_path) if driver_path else webdriver.ChromeService()
        driver = webdriver.Chrome(options=options, service=service)
        # A phone viewport (a headless window is at least 500 px wide, so the size is emulated).
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})
        driver.set_page_load_timeout(30)
        driver.set_script_timeout(30)
        driver.label = label
        self.drivers.append(driver)
        return driver

    def app_url(self):
        url = self.args.app or self.args.base.rstrip("/") + "/app/"
        if self.args.api:
            url += ("&" if "?" in url else "?") + "api=" + urllib.parse.quote(self.args.api, safe=":/")
        return url

    def close(self):
        for driver in self.drivers:
            try:
                driver.quit()
            except WebDriverException:
                pass

    # --- helpers ---------------------------------------------------------------------------

    def step(self, text):
        self.steps.append(text)
        print(f"  ok  {text}", flush=True)

    def shot(self, driver, name):
        self.shots += 1
        path = os.path.join(self.artifacts, f"{self.shots:02d}-{driver.label}-{name}.png")
        driver.save_screenshot(path)

    @staticmethod
    def el(driver, testid):
        return driver.find_element(By.CSS_SELECTOR, f'[data-testid="{testid}"]')

    def until(self, driver, condition, what, timeout=WAIT):
        try:
            return WebDriverWait(driver, timeout, poll_frequency=0.1).until(condition)
        except TimeoutException:
            raise Failure(f"[{driver.label}] timed out after {timeout}s waiting for {what}") from None

    def visible(self, driver, testid, timeout=WAIT):
        return self.until(driver, EC.visibility_of_element_located((By.CSS_SELECTOR, f'[data-testid="{testid}"]')),
                          f'"{testid}" to be visible', timeout)

    def click(self, driver, testid):
        button = self.until(driver, EC.element_to_be_clickable((By.CSS_SELECTOR, f'[data-testid="{testid}"]')),
                            f'"{testid}" to be clickable')
        # Centred first: at the bottom edge the fixed tab bar would take the click.
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", button)
        button.click()
        return button

    def view_shown(self, driver, name, timeout=WAIT):
        self.until(driver, lambda d: d.find_element(By.ID, f"view-{name}").is_displayed(), f"the {name} view", timeout)

    def attr(self, driver, element_id, name):
        return driver.find_element(By.ID, element_id).get_attribute(name)

    def local(self, driver, key):
        return driver.execute_script("return localStorage.getItem(arguments[0]);", key)

    def server_get(self, path, token):
        request = urllib.request.Request(self.args.base.rstrip("/") + path,
                                         headers={"Authorization": f"Bearer {token}", "Accept": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return json.load(response)
        except urllib.error.HTTPError as e:
            raise Failure(f"GET {path} answered {e.code}: {e.read()[:300]!r}") from None

    # --- shared flows ----------------------------------------------------------------------

    def sign_in(self, driver, student):
        driver.get(self.app_url())
        self.visible(driver, "guest-signin")
        self.shot(driver, "signin")
        if self.args.paste_token:
            # Development against a server without guests: a token minted by the binary.
            token = subprocess.run([self.args.bin, "token", "--student", f"{student}-{int(time.time() * 1000)}"], check=True,
                                   capture_output=True, text=True, timeout=30).stdout.strip()
            driver.find_element(By.ID, "token-input").send_keys(token)
            driver.find_element(By.CSS_SELECTOR, "#token-form button[type=submit]").click()
        else:
            self.click(driver, "guest-signin")
        self.view_shown(driver, "profile")
        token = self.local(driver, "swiperank.token")
        if not token:
            raise Failure(f"[{driver.label}] no token in localStorage after sign-in")
        return token

    def set_profile(self, driver, major="Computer Science"):
        fields = {"p-lat": "42.36", "p-lon": "-71.06", "p-state": "MA", "p-budget": "30000", "p-sat": "1350"}
        for element_id, value in fields.items():
            box = driver.find_element(By.ID, element_id)
            box.clear()
            box.send_keys(value)
        distance = driver.find_element(By.ID, "p-distance")
        distance.clear()
        distance.send_keys("300")
        Select(driver.find_element(By.ID, "p-size")).select_by_value("medium")
        if self.args.paste_token and driver.find_element(By.ID, "major-text-field").is_displayed():
            # Development against a server without GET /catalog/majors: the typed fallback.
            driver.find_element(By.ID, "major-text").send_keys(major)
            self.click(driver, "profile-save")
            self.view_shown(driver, "swipe")
            self.visible(driver, "card")
            return
        # The major picker: filter, then tick the major in the list the server sent.
        self.until(driver, lambda d: d.find_elements(By.CSS_SELECTOR, '[data-testid="major-option"]'),
                   "the majors list (GET /catalog/majors)")
        driver.find_element(By.ID, "major-filter").send_keys(major)
        option = self.until(driver, EC.element_to_be_clickable(
            (By.CSS_SELECTOR, f'[data-testid="major-option"][value="{major}"]')), f"the major {major!r} in the picker")
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", option)
        option.click()
        self.until(driver, lambda d: major in d.find_element(By.ID, "major-chosen").text, "the chosen major to show")
        self.shot(driver, "profile")
        self.click(driver, "profile-save")
        self.view_shown(driver, "swipe")
        self.visible(driver, "card")

    def swipes_done(self, driver):
        return int(self.attr(driver, "view-swipe", "data-swipes-done") or 0)

    def swipe(self, driver, how, done_before):
        card = self.visible(driver, "card")
        item = card.get_attribute("data-item-id")
        if how == "like-button":
            self.click(driver, "like")
        elif how == "dislike-button":
            self.click(driver, "dislike")
        elif how in ("right-key", "left-key"):
            ActionChains(driver).send_keys(Keys.ARROW_RIGHT if how == "right-key" else Keys.ARROW_LEFT).perform()
        elif how in ("drag-right", "drag-left"):
            # 135 px from the card's centre: past the app's threshold (a third of the card,
            # at most 120 px) and still inside the 390 px viewport.
            step = 45 if how == "drag-right" else -45
            chain = ActionChains(driver).click_and_hold(card)
            for _ in range(3):
                chain = chain.move_by_offset(step, 0)
            chain.release().perform()
        else:
            raise ValueError(how)
        # The app counts a swipe as done once the server answered or it was queued.
        self.until(driver, lambda d: self.swipes_done(d) >= done_before + 1, f"swipe {done_before + 1} ({how}) to finish")
        return item

    # --- scenario 1 ------------------------------------------------------------------------

    def scenario_swipes(self):
        print("scenario 1: guest, profile, 15 swipes (3 offline), sync", flush=True)
        d = self.browser("solo")
        token = self.sign_in(d, "browser-solo")
        self.step("signed in (token kept in localStorage)")
        self.set_profile(d)
        self.step("profile saved with a major from the picker; first card shown")
        self.shot(d, "first-card")

        plan = ["like-button", "dislike-button", "right-key", "left-key", "drag-right", "dislike-button",
                "like-button", "left-key", "drag-left", "right-key", "dislike-button", "like-button"]
        feedback_seen = 0
        swiped = []
        for i, how in enumerate(plan):
            swiped.append(self.swipe(d, how, i))
            feedback = self.el(d, "feedback")
            if feedback.is_displayed():
                feedback_seen += 1
                options = d.find_elements(By.CSS_SELECTOR, '[data-testid="feedback-option"]')
                if not options:
                    raise Failure("a feedback prompt showed no options")
                options[0].click()
                self.shot(d, f"feedback-{i + 1}")
                self.click(d, "feedback-send")
                self.until(d, EC.invisibility_of_element_located((By.CSS_SELECTOR, '[data-testid="feedback"]')),
                           "the feedback prompt to close after Send")
        if len(set(swiped)) != len(swiped):
            raise Failure(f"a card was shown twice: {swiped}")
        self.step(f"12 online swipes (buttons, arrow keys, 2 drags); {feedback_seen} feedback prompt(s) answered")
        self.shot(d, "after-12")

        # Enough cards held to swipe offline.
        self.until(d, lambda drv: int(self.attr(drv, "view-swipe", "data-buffered") or 0) >= 3, "3 buffered cards")
        d.execute_cdp_cmd("Network.enable", {})
        d.execute_cdp_cmd("Network.emulateNetworkConditions",
                          {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
        for i, how in enumerate(["like-button", "left-key", "right-key"]):
            swiped.append(self.swipe(d, how, 12 + i))
        indicator = self.until(d, lambda drv: drv.find_element(By.CSS_SELECTOR, '[data-testid="queue-indicator"]')
                               if drv.find_element(By.CSS_SELECTOR, '[data-testid="queue-indicator"]')
                               .get_attribute("data-count") == "3" else False, "the queue indicator to count 3")
        text = indicator.text
        if not indicator.is_displayed() or "3" not in text:
            raise Failure(f"the queue indicator should show 3 queued swipes, shows {text!r}")
        online = d.execute_script("return navigator.onLine;")
        self.step(f"3 offline swipes queued (indicator: {text!r}; navigator.onLine {online})")
        self.shot(d, "offline-queued")

        d.execute_cdp_cmd("Network.emulateNetworkConditions",
                          {"offline": False, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1})
        self.until(d, lambda drv: self.el(drv, "queue-indicator").get_attribute("data-count") == "0"
                   and not self.el(drv, "queue-indicator").is_displayed(), "the offline queue to flush", SYNC_WAIT)
        self.shot(d, "synced")
        token = self.local(d, "swiperank.token") or token
        state = self.server_get("/student/learning-state", token)
        if state.get("total_swipes") != 15:
            raise Failure(f"the server counts {state.get('total_swipes')} swipes, expected 15: {state}")
        self.step("back online: queue flushed; server says total_swipes == 15")
        if feedback_seen == 0:
            raise Failure("no feedback prompt appeared during the 12 online swipes")

        self.click(d, "nav-progress")
        self.until(d, lambda drv: self.el(drv, "total-swipes").text == "15", "the progress view to show 15 swipes")
        self.shot(d, "progress")
        self.step("progress view shows 15 swipes and the weights")

    # --- scenario 2 ------------------------------------------------------------------------

    def scenario_group(self):
        print("scenario 2: two guests, a group, a match on both screens", flush=True)
        a, b = self.browser("groupA"), self.browser("groupB")
        for driver, name in ((a, "browser-a"), (b, "browser-b")):
            self.sign_in(driver, name)
            self.set_profile(driver)
        self.step("two guests signed in with profiles")

        self.click(a, "nav-group")
        self.click(a, "group-create")
        code = self.until(a, lambda d: self.el(d, "group-code").text.strip() or False, "the invite code")
        self.visible(a, "group-option")
        self.shot(a, "group-created")
        self.step(f"A created a group, invite code {code}")

        self.click(b, "nav-group")
        self.visible(b, "group-join-code").send_keys(code)
        self.click(b, "group-join")
        self.visible(b, "group-option")
        self.shot(b, "group-joined")
        # A hears of B over the event stream.
        self.until(a, lambda d: self.el(d, "group-members").get_attribute("data-count") == "2",
                   "A to see 2 members (SSE joined event)")
        self.step("B joined with the code; A saw the join over the event stream")

        target = self.el(a, "group-option").get_attribute("data-option-id")
        target_name = self.el(a, "group-option-name").text
        self.click(a, "group-like")
        self.until(a, lambda d: self.el(d, "group-option").get_attribute("data-option-id") != target
                   or self.el(d, "group-match").is_displayed(), "A's like to be recorded")
        for _ in range(30):  # B passes until the option A liked (the decks share one order)
            self.visible(b, "group-option")
            current = self.el(b, "group-option").get_attribute("data-option-id")
            if current == target:
                break
            self.click(b, "group-pass")
            self.until(b, lambda d: self.el(d, "group-option").get_attribute("data-option-id") != current,
                       "B's pass to be recorded")
        else:
            raise Failure(f"B never got the option A liked ({target_name})")
        self.click(b, "group-like")

        names = []
        for driver in (a, b):
            self.visible(driver, "group-match", timeout=20)
            name = self.until(driver, lambda d: self.el(d, "group-match-name").text.strip() or False, "the matched name")
            self.shot(driver, "match")
            names.append(name)
        if names[0] != names[1]:
            raise Failure(f"the match screens differ: A {names[0]!r}, B {names[1]!r}")
        self.step(f"both browsers show the match: {names[0]!r} (A's via the event stream)")

    # --- main ------------------------------------------------------------------------------

    def dump_logs(self):
        for driver in self.drivers:
            try:
                self.shot(driver, "failure")
                for entry in driver.get_log("browser")[-20:]:
                    print(f"    [{driver.label} console] {entry.get('level')}: {entry.get('message')}", file=sys.stderr)
            except WebDriverException:
                pass


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", required=True, help="the server, e.g. http://127.0.0.1:8080")
    parser.add_argument("--bin", default=".build/release/swiperank", help="the swiperank binary")
    parser.add_argument("--app", help="development: the app's URL when not served at BASE/app/")
    parser.add_argument("--api", help="development: passed to the app as ?api=")
    parser.add_argument("--paste-token", action="store_true",
                        help="development: sign in with tokens minted by --bin instead of as guests")
    parser.add_argument("--only", choices=["swipes", "group"], help="run one scenario")
    args = parser.parse_args()

    # `timeout` in scripts/browser-test sends SIGTERM: exit through `finally` so the browsers go too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(124))
    run = Run(args)
    started = time.monotonic()
    try:
        if args.only in (None, "swipes"):
            run.scenario_swipes()
        if args.only in (None, "group"):
            run.scenario_group()
    except (Failure, WebDriverException) as e:
        print(f"\nFAIL: {e}", file=sys.stderr)
        run.dump_logs()
        print(f"screenshots in {run.artifacts}", file=sys.stderr)
        return 1
    finally:
        run.close()
    print(f"\nPASS: {len(run.steps)} checks in {time.monotonic() - started:.1f}s; screenshots in {run.artifacts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
