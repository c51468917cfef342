"""An environment: a class with ``reset`` and ``step``, or code that resets and steps one."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.calls import (
    ENVIRONMENT_WORDS,
    EPISODE_WORDS,
    NOT_AGENT_ENVIRONMENTS,
    built_environment,
    is_env_step,
    method,
    names_an_environment,
    single_turn,
    uncast,
)
from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid, keyword
from arb_audit.analyzer.detectors.multi_turn_loop import NOT_TRAINING_SCOPES
from arb_audit.analyzer.loss_slice import words
from arb_audit.analyzer.names import dotted, last_name, literal_bool, literal_text
from arb_audit.analyzer.walk import descendants

SINGLE_TURN = "single_turn"
"""Variant of an ``environment`` finding whose ``step`` always ends the episode."""
DEFINED = "defined"
"""Variant of an ``environment`` finding for a class the file defines (not one it drives): an
environment serves whoever runs it, the benchmark it wraps included."""
TERMINATION_WORDS = ("done", "terminated", "terminal", "truncated", "game_over")
"""Words of the names that say an episode is over."""


ENVIRONMENT_METHOD_WORDS = frozenset(
    {"reward", "rewards", "score", "step", "observation", "obs", "tool", "tools", "done"}
)
"""Words of a method by which a specialised environment says how an episode goes or is scored."""
END_WORDS = frozenset({"complete", "completed", "done", "finished", "over", "terminal"})
"""Last words of a method asking whether an episode is over (``is_complete``, ``is_done``)."""


NOT_TOOL_WORDS = frozenset(
    {"reward", "rewards", "score", "scores", "prompt", "prompts", "input", "inputs", "metric", "metrics"}
)
"""Words of an environment's method that scores or feeds the model rather than being a tool it calls."""


def _tool_method(name: str) -> bool:
    """Say whether a method may be a tool the model calls: public, not named for scoring or prompting."""
    return not name.startswith("_") and not NOT_TOOL_WORDS & set(words(name))


def _answers_turns(name: str) -> bool:
    """Say whether a method is one by which an environment starts an episode or answers a turn.

    ``reset`` (TRL's ``environment_factory`` classes: ``reset`` and the tools the model calls, so
    only beside a method that may be a tool),
    ``env_response``/``get_env_response``, ``is_completed``/``is_complete``/``is_done``, and the rest
    of :data:`TURN_METHODS`.
    """
    if name in TURN_METHODS or name == "reset":
        return True
    said = words(name)
    return {"env", "response"} <= set(said) or (said[:1] == ("is",) and said[-1] in END_WORDS)


TURN_ANSWER_WORDS = frozenset({"step", "observation", "obs", "tool", "tools"})
"""Words of a method by which an environment answers an agent's turn (not only scores its answer)."""
PLAYING_WORDS = EPISODE_WORDS | {"trajectory", "trajectories", "generate"}
"""Words of a method that plays an environment's episodes itself (``collect_trajectories``; not
``collect_metadata``)."""
TURN_METHODS = frozenset({"env_response", "is_completed", "rollout", "step_env", "get_observation"})
"""Methods by which an environment answers an agent's turn or says the episode is over."""


class Environment(RouteDetector):
    """Defining or driving a text environment is a component of online RL.

    A class with both ``reset`` and ``step`` methods is an environment (gym's and OpenEnv's interface)
    unless its ``step`` is concrete and hands nothing back and neither its name nor a base says
    environment (an agent counting its own actions, a scheduler),
    and so is one whose ``step(action)`` answers with a reward and an end-of-episode flag (frameworks
    whose environments start episodes elsewhere); a function that calls ``x.reset()`` and
    ``x.step(action)`` drives one. On its own — no trainer in the file — this makes the file a
    component that a training launcher loads. A ``step`` that sets its episode's end flag only ever to
    ``True`` ends every episode after one action: the environment serves single-turn rollouts (a
    verifier wrapped as an environment), which is not multi-turn RL.
    """

    TRIGGERS = ("reset", "def step", "env_step", "environment_step", "Env", "gym", "textarena")

    VALID = (
        Valid("class Counter:\n    def step(self):\n        self.n += 1\n"),
        # an agent's bookkeeping: its ``step`` counts the actions it took and answers nothing
        Valid(
            "class Agent:\n    def reset(self):\n        self.steps = 0\n"
            "    def step(self, observation=None, action=None):\n        self.steps += 1\n"
            "        self.history.append((observation, action))\n"
        ),
        # an environment played with random actions only: a smoke test, no policy's episodes
        Valid(
            "import numpy as np\ndef main():\n    result = env.reset()\n    for _ in range(100):\n"
            "        action = np.random.choice(result.legal_actions)\n        result = env.step(action)\n"
        ),
        Valid("def demo():\n    env.reset()\n    env.step(env.action_space.sample())\n"),
        Valid("optimizer.step()\nscheduler.step()\n"),
        Valid("def train_step(batch):\n    return {'loss': loss(batch), 'reward': r, 'done': True}\n"),
        Valid("def summarize_env_step(r):\n    return {'reward': r['reward'], 'done': r['terminated']}\n"),
        Valid(
            "def env_step(state, guess):\n    won = guess == state['secret']\n"
            "    return {'observation': guess, 'reward': float(won), 'done': won}\n"
            "for ep in range(10):\n    res = env_step(state, model_guess(state))\n"
        ),
        Valid("class Stepper:\n    def step(self, batch):\n        return self.model(batch)\n"),
        Valid("class EnvConfig(BaseModel):\n    def rollout(self):\n        return None\n"),
        Valid("class Settings(EnvSettings):\n    def path(self):\n        return self.root\n"),
        Valid("class Spec(Env):\n    pass\n"),
        Valid("class ProjectEnv(DotEnv):\n    def get_secret(self, key):\n        return self[key]\n"),
        Valid("from jinja2 import Environment\ndef env():\n    return Environment(loader=loader)\n"),
        Valid("class LocalEnv:\n    pass\ndef make():\n    return LocalEnv()\n"),
        Valid("import os\nx = os.environ.get('HOME')\ne = SomeEnv()\n"),
        Valid("from ray.runtime_env import RuntimeEnv\ndef env():\n    return RuntimeEnv(pip=['torch'])\n"),
        Valid("from x import PythonVirtualEnv\ndef env():\n    return PythonVirtualEnv(path)\n"),
        Valid(
            "from lightning.fabric.plugins.environments import SLURMEnvironment\n"
            "def plugins():\n    return SLURMEnvironment()\n"
        ),
        Valid(
            "import gymnasium as gym\nenv = gym.make('CartPole-v1')\nfor _ in range(9):\n    env.step(0)\n"
        ),
        Valid(
            "import os, gymnasium as gym\nenv = gym.make('CartPole-v1')\n"
            "def subprocess_env():\n    env = dict(os.environ)\n    return env\n"
            "def closed():\n    env = gym.make('CartPole-v1')\n    env = None\n    return env\n"
        ),
        Valid(
            "def eval(args, env, agent):\n    obs = env.reset()\n"
            "    obs, r, done, info = env.step(agent(obs))\n"
        ),
        Valid("class TestEnv:\n    def is_ready(self):\n        return True\n"),
        # reset() samples a batch of prompts, get_rewards() scores them: single-turn
        Valid(
            "class PromptEnv:\n    def reset(self):\n        return self.sample_prompts()\n"
            "    def get_rewards(self, outputs):\n        return [score(o) for o in outputs]\n"
        ),
        # a single-turn task under a base named Environment: a prompt and the reward of its answer
        Valid(
            "class DigitEnvironment(Environment):\n    def prompt(self):\n        return 'a digit?'\n"
            "    def reward(self, completion):\n        return float(completion.strip() == '7')\n"
        ),
        # a template environment, even with a method named for tools
        Valid(
            "from jinja2 import Environment\nclass Templates(Environment):\n"
            "    def tool_block(self, name):\n        return self.get_template(name)\n"
        ),
    )
    INVALID = (
        # an interface whose step only logs and leaves the answer to subclasses
        Invalid(
            "class BaseGame:\n    def reset(self):\n        raise NotImplementedError\n"
            "    def step(self, action):\n        logger.debug(action)\n"
            "        raise NotImplementedError()\n",
            "environment",
        ),
        # an interface whose step has only its docstring
        Invalid(
            "class Game:\n    def reset(self):\n        pass\n"
            '    def step(self, action):\n        """Advance by one action."""\n',
            "environment",
        ),
        # built on gym's environment, it keeps its state on the object
        Invalid(
            "import gym\nclass Grid(gym.Env):\n    def reset(self):\n        self.pos = 0\n"
            "    def step(self, action):\n        self.pos += action\n",
            "environment",
        ),
        # named an environment, it keeps its answer on the object (PettingZoo's step returns None)
        Invalid(
            "class WordleEnv:\n    def reset(self):\n        self.guesses = []\n"
            "    def step(self, guess):\n        self.guesses.append(guess)\n"
            "        self.last_feedback = score(guess, self.target)\n",
            "environment",
        ),
        # a wrapper answering with the wrapped environment's end flag, cut at a step limit
        Invalid(
            "class WebEnv:\n    def reset(self):\n        return self.env.reset()\n"
            "    def step(self, action):\n        ob, reward, done, info = self.env.step(action)\n"
            "        if self.steps >= self.step_limit:\n            done = True\n"
            "        return ob, reward * 10, done, info\n",
            "environment",
            variant=DEFINED,
        ),
        # ``done=True`` on one path only: an answer without the flag leaves the episode running
        Invalid(
            "class GuessEnv(Environment):\n    def reset(self):\n        return Obs(question=q)\n"
            "    def step(self, call):\n        if call.guess == self.target:\n"
            "            return Result(result='right', reward=1.0, done=True)\n"
            "        return Result(result='higher', reward=-0.1)\n",
            "environment",
            variant=DEFINED,
        ),
        # another step's answer returned directly where the submit path sets ``done=True``
        Invalid(
            "class ShellEnv(BaseEnv):\n    def reset(self):\n        return Obs(done=False)\n"
            "    def step(self, action):\n        if action.name == 'submit':\n"
            "            return Obs(done=True, reward=grade(action))\n"
            "        return self.shell.step(action)\n",
            "environment",
            variant=DEFINED,
        ),
        # epsilon-greedy: random draws beside the network that chooses the action
        Invalid(
            "import random\ndef collect(env, q_net, eps):\n    obs = env.reset()\n    for t in range(200):\n"
            "        a = env.action_space.sample() if random.random() < eps else q_net(obs).argmax()\n"
            "        obs, r, done, info = env.step(a)\n",
            "environment",
        ),
        # the parent's answer handed back where the submit path sets ``done=True``
        Invalid(
            "class ToolEnv(MCPEnvironment):\n    def reset(self):\n        return Obs(done=False)\n"
            "    def step(self, action):\n        obs = self.tools.step(action)\n"
            "        if action.tool_name == 'submit':\n"
            "            return Obs(done=True, reward=score(action))\n"
            "        return obs\n",
            "environment",
            variant=DEFINED,
        ),
        # an observation built with ``done=True`` on every path: one answer per episode
        Invalid(
            "class QuizEnv(Environment):\n    def reset(self):\n        return Obs(question=q, done=False)\n"
            "    def step(self, action):\n        score = grade(action.answer)\n"
            "        return Obs(score=score, done=True, reward=float(score))\n",
            "environment",
            variant=SINGLE_TURN,
        ),
        Invalid(
            "import gymnasium as gym\ndef make_env(env_id):\n    env = gym.make(env_id)\n"
            "    env = gym.wrappers.RecordEpisodeStatistics(env)\n    return env\n",
            "environment",
        ),
        Invalid(
            "import verifiers as vf\nENV = vf.ToolEnv(tools=[search])\n"
            "def load_environment():\n    return ENV\n",
            "environment",
        ),
        Invalid(
            "class Maze:\n    def reset(self):\n        return 'start'\n"
            "    def step(self, action):\n        return 'obs', 0.0, False\n",
            "environment",
        ),
        Invalid(
            "class SQLEnv(BaseTextEnv):\n    def step(self, action):\n        done = self.finished(action)\n"
            "        return StepOutput(observations=run(action), reward=score(action), done=done)\n",
            "environment",
        ),
        Invalid(
            "class Gsm8k(BaseTextEnv):\n    def step(self, action):\n        done = True\n"
            "        return StepOutput(observations=[], reward=score(action), done=done)\n",
            "environment",
            None,
            SINGLE_TURN,
        ),
        Invalid(
            "class MathEnvironment(EnvironmentInterface):\n"
            "    def step(self, message_log_batch, metadata):\n"
            "        rewards = torch.tensor(self.grade(message_log_batch, metadata)).cpu()\n"
            "        done = torch.ones_like(rewards).cpu()\n"
            "        return EnvironmentReturn(observations=obs, rewards=rewards, terminateds=done)\n",
            "environment",
            None,
            SINGLE_TURN,
        ),
        Invalid(
            "class Wordle(gym.Env):\n    def step(self, action):\n        reward = self.score(action)\n"
            "        if not valid(action):\n            obs, done = 'invalid', True\n"
            "            return obs, -1.0, done, {}\n"
            "        return self.feedback(action), reward, action == self.target, {}\n",
            "environment",
        ),
        Invalid(
            "class MathEnv(gym.Env):\n    def step(self, action):\n        reward = score(action)\n"
            "        obs, terminated, truncated, info = '', True, False, {}\n"
            "        return obs, reward, terminated, truncated, info\n",
            "environment",
            None,
            SINGLE_TURN,
        ),
        Invalid(
            "class Countdown(BaseEnv, gym.Env):\n    def step(self, action):\n"
            "        reward = self.score(action)\n        obs, done, info = 'scored', True, {}\n"
            "        return obs, reward, done, info\n",
            "environment",
            None,
            SINGLE_TURN,
        ),
        Invalid(
            "class ToolEnv(MultiTurnEnv):\n    def is_completed(self, messages, state):\n"
            "        return state['done']\n"
            "    def env_response(self, messages, state):\n        return run_tool(messages[-1]), state\n",
            "environment",
        ),
        Invalid(
            "from .base import Env\nclass SearchEnv(Env):\n    def get_step_reward(self, responses):\n"
            "        return [self.tool_manager.parse_response(r) for r in responses]\n",
            "environment",
        ),
        Invalid(
            "class MathEnv(SingleTurnEnv):\n    def env_response(self, messages, state):\n"
            "        return [], state\n",
            "environment",
            None,
            SINGLE_TURN,
        ),
        Invalid(
            "async def env_step(sample):\n    out = {'next_state': None, 'done': False, 'reward': 0.0}\n"
            "    if sample.finished:\n        out['done'] = True\n        out['reward'] = score(sample)\n"
            "    else:\n        out['next_state'] = sample.text + search(sample.query)\n    return out\n",
            "environment",
            variant=DEFINED,
        ),
        Invalid(
            "def env_step(sample):\n    out = {'next_state': None, 'done': True, 'reward': 0.0}\n"
            "    out['reward'] = float(check(sample.action_text))\n    return out\n",
            "environment",
            variant=SINGLE_TURN,
        ),
        Invalid(
            "def episode(env, policy):\n    obs = env.reset()\n    obs, r, done, _ = env.step(policy(obs))\n",
            "environment",
        ),
        Invalid(
            "import verifiers as vf\ndef load_environment():\n"
            "    return vf.ToolEnv(dataset=ds, tools=[search, read], max_turns=10, rubric=rubric)\n",
            "environment",
        ),
        Invalid(
            "from verifiers.envs.textarena_env import TextArenaEnv\ndef load_environment():\n"
            "    env = TextArenaEnv(game='Wordle-v0')\n    return env\n",
            "environment",
        ),
        Invalid(
            "import gymnasium as gym\ndef make_env():\n    return gym.make('FrozenLake-v1')\n", "environment"
        ),
        # TRL's environment_factory class: reset() and the tools the model calls; a multi-turn
        # environment answering turns and saying when the episode is over
        Invalid(
            "class SearchEnv:\n    def reset(self, metadata):\n        self.docs = []\n"
            "    def search(self, query):\n        return retrieve(query)\n",
            "environment",
            variant=DEFINED,
        ),
        Invalid(
            "class TAEnv(Env):\n    def get_env_response(self, rollout, state):\n        return msg, state\n"
            "    def is_complete(self, rollout, state):\n        return state.done\n",
            "environment",
            variant=DEFINED,
        ),
        # a project's environment answering an agent's tool calls (its base plays the episodes);
        # a method collecting metadata plays none
        Invalid(
            "from src.environments.base import Environment\nclass SWEEnvironment(Environment):\n"
            "    def dispatch_tool(self, name, arguments):\n        return self.run(name, arguments)\n"
            "    def collect_metadata(self):\n        return {'image': self.image}\n",
            "environment",
            variant=DEFINED,
        ),
        Invalid(
            "import verifiers as vf\ndef load_environment():\n"
            "    env = vf.SingleTurnEnv(dataset=ds, rubric=rubric)\n    return env\n",
            "environment",
            None,
            SINGLE_TURN,
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.functions: list[set[str]] = []
        self.assigned: set[tuple[int, str]] = set()
        """(scope, name) of every name assigned, to tell a function's own binding from the module's."""
        self.built: dict[tuple[int, str], tuple[cst.Call, str]] = {}
        """Names last bound, in a scope, to a library's environment built there: (the call, the class)."""
        self.step_functions: dict[str, tuple[cst.FunctionDef, bool]] = {}
        """Functions named ``env_step`` that answer with a reward and an end -> (the function, whether
        every episode ends after one action)."""
        self.stepped_here: set[str] = set()
        """Those the file calls itself (an evaluation or demo loop of its own), not handed on."""

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        body = node.body.body if type(node.body) is cst.IndentedBlock else ()
        methods = {s.name.value for s in body if type(s) is cst.FunctionDef}
        step = next((s for s in body if type(s) is cst.FunctionDef and s.name.value == "step"), None)
        if step is None:
            self._named_environment(node, methods)
            return
        answers = _answers(step)
        if answers is None and (
            "reset" not in methods or (_gives_nothing(step) and not self._named_env(node))
        ):
            return  # (an agent's ``step()`` counting its own actions answers nobody)
        how = (
            "defines reset() and step()" if "reset" in methods else "step() answers with a reward and an end"
        )
        single = answers is not None and answers[1] and all(answers[1])
        variant = SINGLE_TURN if single else DEFINED
        self.report(node, "environment", f"{node.name.value} {how}", variant=variant)

    def _named_env(self, node: cst.ClassDef) -> bool:
        """Say whether a class's name or a base's says environment (``WordleEnv``, ``AECEnv``).

        Such a ``step`` may keep its answer on the object (PettingZoo's ``step`` returns None).
        """
        return names_an_environment(node.name.value) or self._environment_base(node) is not None

    def _named_environment(self, node: cst.ClassDef, methods: set[str]) -> None:
        """Report a class named as an environment that answers an agent's turns (``env_response``).

        ``class ToolEnv(MultiTurnEnv)`` with ``env_response`` and ``is_completed``: frameworks whose
        environments are not gym-shaped still name them so, and their turn methods say what they do.
        """
        bases = [dotted(b.value).rsplit(".", 1)[-1] for b in node.bases]
        said = [words(n) for n in (node.name.value, *bases)]
        single = any(single_turn(n) for n in (node.name.value, *bases))
        variant = SINGLE_TURN if single else DEFINED
        answering = {m for m in methods if _answers_turns(m)}
        if "reset" in methods and not any(_tool_method(m) for m in methods - {"reset"}):
            answering.discard("reset")  # (``reset`` and ``get_rewards`` only: a batch of prompts scored)
        if any(w and w[-1] in ENVIRONMENT_WORDS for w in said) and answering:
            turns = ", ".join(sorted(answering))
            message = f"{node.name.value} is an environment answering turns ({turns})"
            self.report(node, "environment", message, variant=variant)
        elif (base := self._environment_base(node)) and (
            any(
                (ENVIRONMENT_METHOD_WORDS if words(base)[-1] == "env" else TURN_ANSWER_WORDS) & set(words(m))
                for m in methods
            )
            and not any(PLAYING_WORDS & set(words(m)) for m in methods)
        ):
            # a project's environment specialised (``class SearchEnv(Env)`` overriding its rewards):
            # the base plays the episodes, the subclass says how they are scored. A subclass that
            # plays them itself (``collect_trajectories``) is read by what its own rollout does. A
            # base named ``Environment`` is as often a single-turn task's (a prompt and its reward):
            # its subclass is an agent's world only where it answers turns (``dispatch_tool``).
            message = f"{node.name.value} specialises the environment {base}"
            self.report(node, "environment", message, variant=variant)

    def _environment_base(self, node: cst.ClassDef) -> str | None:
        """Return the name of a base class named for an agent's environment (``Env``, ``Environment``).

        Not a template's, a setting's or a cluster's (``jinja2.Environment``: see ``NOT_AGENT_ENVIRONMENTS``).
        """
        for base in node.bases:
            name = dotted(base.value).rsplit(".", 1)[-1]
            if names_an_environment(name) and not any(
                q.startswith(NOT_AGENT_ENVIRONMENTS) for q in self.names(base.value)
            ):
                return name
        return None

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.append(set())
        said = words(node.name.value)
        if len(said) == 2 and said[0] in ENVIRONMENT_WORDS and said[1] == "step":
            # a framework's environment written as a function (``async def env_step(sample)``
            # answering ``{"next_state": ..., "reward": r, "done": d}``), handed to its rollout; a
            # ``summarize_env_step`` helper is not one
            answers = _answers(node)
            if answers is not None:
                self.step_functions[node.name.value] = (node, bool(answers[1]) and all(answers[1]))

    def visit_Call(self, node: cst.Call) -> None:
        if self.functions and (is_env_step(node) or method(node) == "reset"):
            self.functions[-1].add("step" if method(node) == "step" else "reset")
        elif self.functions and self._samples_at_random(node):
            self.functions[-1].add("random")
        elif self.functions and _chooses_actions(node):
            # an action a policy, a model or an agent chooses (epsilon-greedy draws beside it)
            self.functions[-1].add("policy")
        if type(node.func) is cst.Name and node.func.value in self.step_functions:
            self.stepped_here.add(node.func.value)

    def _samples_at_random(self, node: cst.Call) -> bool:
        """Say whether a call draws at random (``np.random.choice(legal)``, ``env.action_space.sample()``).

        A function that plays an environment with random actions and nothing else is a smoke test
        of the environment, not a policy's episodes.
        """
        func = node.func
        if (
            type(func) is cst.Attribute
            and func.attr.value == "sample"
            and last_name(func.value) == "action_space"
        ):
            return True
        # (only a dotted name can be a module's function: ``super().step`` is none; a seed or a
        # shuffle draws no action)
        if last_name(func) not in RANDOM_DRAWS or not dotted(func) or keyword(node, "p") is not None:
            return False  # (``choice(n, p=probs)`` samples a policy's distribution)
        return any(q.startswith(RANDOM_MODULES) for q in self.names(func))

    def leave_Module(self, original_node: cst.Module) -> None:
        for name, (node, single) in self.step_functions.items():
            if name in self.stepped_here:
                continue  # the file plays its own episodes with it: that loop decides what it is for
            message = f"{name}() answers an action with a reward and an end"
            self.report(node, "environment", message, variant=SINGLE_TURN if single else DEFINED)

    def visit_Assign(self, node: cst.Assign) -> None:
        value = node.value
        built = self._built(value) if type(value) is cst.Call else None
        scope = id(self.context.scope)
        for target in node.targets:
            if type(target.target) is cst.Name:
                key = (scope, target.target.value)
                self.assigned.add(key)
                if built is not None and type(value) is cst.Call:
                    self.built[key] = (value, built)
                elif key in self.built and _wraps(value, target.target.value):
                    pass  # ``env = RecordEpisodeStatistics(env)``: the same environment, wrapped
                else:  # rebound to something else
                    self.built.pop(key, None)

    def _built(self, call: cst.Call) -> str | None:
        return built_environment(call, self.names, self.context.resolver.is_imported)

    def visit_Return(self, node: cst.Return) -> None:
        # a library's environment built and handed back (``def load_environment(): return
        # vf.ToolEnv(tools=..., max_turns=10)``) is served to whatever trains on its episodes; one a
        # script only builds and plays makes data or evaluates (a trainer handed one says so itself)
        value = node.value
        if type(value) is cst.Call:
            built = self._built(value)
            found = (value, built) if built is not None else None
        else:
            found = None
            if type(value) is cst.Name:
                # the function's own binding, else, where it binds none, the module's
                # (``ENV = vf.ToolEnv(...)`` returned by ``load_environment``)
                own = (id(self.context.scope), value.value)
                module = (id(self.context.resolver.module_scope), value.value)
                found = self.built.get(own if own in self.assigned else module)
        if found is not None:
            call, name = found
            variant = SINGLE_TURN if single_turn(name) else None
            self.report(call, "environment", f"builds and returns the environment {name}", variant=variant)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        # an environment driven to evaluate or demo an agent (``def eval(args)``) produces no training
        scoped = NOT_TRAINING_SCOPES & set(words(original_node.name.value))
        done = self.functions.pop()
        # random draws with no policy or model to choose the action instead: a smoke test
        random_play = "random" in done and "policy" not in done
        if {"reset", "step"} <= done and not random_play and not scoped:
            self.report(
                original_node, "environment", f"{original_node.name.value}() resets and steps an environment"
            )


def _wraps(value: cst.BaseExpression, name: str) -> bool:
    """Say whether ``value`` is a call given ``name`` itself (a wrapper around what the name holds)."""
    return type(value) is cst.Call and any(
        type(a.value) is cst.Name and a.value.value == name for a in value.args
    )


def _gives_nothing(step: cst.FunctionDef) -> bool:
    """Say whether a written ``step`` hands nothing back: no value returned, nothing yielded.

    An explicit ``return None`` counts as a value returned. An environment's ``step`` answers the
    action (an observation, a reward); one that only updates its object's counters or history is
    some other thing's step. An abstract one (only a docstring, ``pass``, ``...`` or a ``raise``, or
    any ``raise NotImplementedError``) says what its subclasses answer: it is not read so. (A function
    nested in it that returns counts as an answer: the doubt goes to the environment.)
    """
    for n in descendants(step.body):
        if (type(n) is cst.Return and n.value is not None) or type(n) is cst.Yield:
            return False
        if type(n) is cst.Raise and n.exc is not None:
            raised = n.exc.func if type(n.exc) is cst.Call else n.exc
            if last_name(raised) == "NotImplementedError":
                return False
    body = step.body.body if type(step.body) is cst.IndentedBlock else ()
    concrete = [
        s
        for s in body
        if not (
            type(s) is cst.SimpleStatementLine
            and all(
                type(x) in (cst.Pass, cst.Raise)
                or (type(x) is cst.Expr and type(x.value) in (cst.SimpleString, cst.Ellipsis))
                for x in s.body
            )
        )
    ]
    return bool(concrete)


def _answers(step: cst.FunctionDef) -> tuple[bool, list[bool]] | None:
    """Read an environment's ``step(action)``: None unless it speaks of a reward and an episode's end.

    Otherwise ``(True, ends)``: ``ends`` holds, for every literal or assigned value of its end flag,
    whether it is the constant ``True``.
    """
    params = [p for p in step.params.params if p.name.value not in ("self", "cls")]
    if not params:
        return None
    words: set[str] = set()
    ends: list[bool] = []
    passed_on: set[str] = set()  # names bound to an answer with no end flag of its own (``obs = ...``)
    returned: list[str] = []  # names returned as they are (``return obs``)

    for node in descendants(step.body):
        if type(node) is cst.Name:
            words.add(node.value.lower())
        elif type(node) is cst.SimpleString:
            words.add(
                literal_text(node).lower()
            )  # an answer built as a record (``response["reward"] = 1.0``)
        elif (
            type(node) is cst.DictElement
            and type(node.key) is cst.SimpleString
            and _ends(literal_text(node.key))
        ):
            ends.append(_always_ends(node.value))
        elif type(node) is cst.Arg:
            if (
                node.keyword is not None
                and _ends(node.keyword.value)
                # a flag passed on by name (``done=done``) is not read here; ``done=True`` is
                and (type(node.value) is not cst.Name or literal_bool(node.value) is not None)
            ):
                ends.append(_always_ends(node.value))
        elif type(node) is cst.Assign:
            if _answer_of_a_step(node.value) or _flagless(node.value):
                passed_on.update(t.target.value for t in node.targets if type(t.target) is cst.Name)
            for target in node.targets:
                flagged = target.target
                named = _string_key(flagged) if type(flagged) is cst.Subscript else None
                if named is not None and _ends(named):
                    ends.append(_always_ends(node.value))  # ``response["done"] = True``
                elif (
                    type(flagged) is cst.Subscript
                    and type(flagged.value) is cst.Name
                    and _ends(flagged.value.value)
                ):
                    # ``done[i] = 0`` after ``done = torch.ones_like(r)``: some episodes go on
                    ends.append(literal_bool(node.value) is True)
                elif type(target.target) is cst.Name and _ends(target.target.value):
                    if not _uncut(target.target.value, node.value):
                        ends.append(_always_ends(node.value))
                elif (
                    type(target.target) is cst.Tuple
                    and type(node.value) is cst.Tuple
                    and len(target.target.elements) == len(node.value.elements)
                ):
                    # ``obs, done, info = text, True, {}``: each name takes its own value
                    for name, value in zip(target.target.elements, node.value.elements, strict=True):
                        flag = name.value
                        if (
                            type(flag) is cst.Name
                            and _ends(flag.value)
                            and not _uncut(flag.value, value.value)
                        ):
                            ends.append(_always_ends(value.value))
                elif type(target.target) is cst.Tuple and any(
                    type(e.value) is cst.Name and _ends(e.value.value) for e in target.target.elements
                ):
                    # ``ob, reward, done, info = self.env.step(action)``: a wrapped environment's own
                    # end flag, not always set
                    ends.append(False)
        elif type(node) is cst.Return and node.value is not None and _flagless(node.value):
            # a record built without its end flag (``StepResult(result=r, reward=-0.1)``), another
            # step's answer (``return super().step(a)``) or a helper's (``return self._observe(t)``):
            # the episode may go on where other answers set ``done=True``
            ends.append(False)
        elif type(node) is cst.Return and type(node.value) is cst.Name:
            returned.append(node.value.value)
        elif (
            type(node) is cst.Return
            and type(node.value) is cst.Tuple
            and len(node.value.elements) >= 3
            and (
                not isinstance(flag := node.value.elements[2].value, cst.Name)
                or literal_bool(flag) is not None
            )
        ):
            # gym's ``(obs, reward, done, ...)`` with the end computed in place (``guess == target``)
            ends.append(_always_ends(flag))
    # what another step answered, handed back as it is (``obs = await super().step(a); return obs``):
    # its own end flag, not always set
    ends.extend(False for name in returned if name in passed_on)
    if not any("reward" in w for w in words) or not any(_ends(w) for w in words):
        return None
    return True, ends


def _chooses_actions(call: cst.Call) -> bool:
    """Say whether a call may choose an action: a policy's, a model's or an agent's (not an environment's)."""
    said = words(dotted(call.func))
    return bool(said) and bool(ACTION_CHOOSER_WORDS & set(said)) and said[-1] not in ENVIRONMENT_WORDS


def _flagless(value: cst.BaseExpression) -> bool:
    """Say whether a value is a call whose arguments set no end flag (a record, a helper's answer)."""
    call = value.expression if type(value) is cst.Await else value
    return type(call) is cst.Call and not any(
        a.keyword is not None and _ends(a.keyword.value) for a in call.args
    )


def _answer_of_a_step(value: cst.BaseExpression) -> bool:
    """Say whether a value is what a ``step`` call answered (awaited or not)."""
    call = value.expression if type(value) is cst.Await else value
    return type(call) is cst.Call and "step" in words(last_name(call.func))


def _string_key(target: cst.Subscript) -> str | None:
    """Return the literal key of ``record["key"]``, if it is one."""
    index = target.slice[0].slice if len(target.slice) == 1 else None
    if type(index) is cst.Index and type(index.value) is cst.SimpleString:
        return literal_text(index.value)
    return None


RANDOM_MODULES = ("random.", "numpy.random.")
"""Modules of random draws (an action drawn from them is no policy's)."""
ACTION_CHOOSER_WORDS = frozenset(
    {"policy", "model", "agent", "actor", "net", "network", "llm", "act", "generate", "predict", "argmax"}
)
"""Words of a call that chooses an action (``policy.act(obs)``, ``q_net(obs).argmax()``)."""
RANDOM_DRAWS = frozenset({"choice", "choices", "randint", "randrange", "integers", "sample"})
"""Their functions that draw a value (an action), not a seed or a shuffle."""
ALL_ONES = frozenset({"ones", "ones_like"})
"""Constructors of a tensor or array of ones: an end flag set for every episode of a batch."""


def _always_ends(value: cst.BaseExpression) -> bool:
    """Say whether an end flag is set for every episode (``True``, ``torch.ones_like(r)``, ``[True] * n``).

    A batched ``step`` that ends each of its episodes after one answer (NeMo-RL's math environment:
    ``done = torch.ones_like(rewards)``) is single-turn as one returning ``done = True`` is.
    """
    value = uncast(value)
    if type(value) is cst.Integer:
        return value.value == "1"
    if type(value) is cst.Call:
        return last_name(value.func) in ALL_ONES
    if type(value) is cst.BinaryOperation and isinstance(value.operator, cst.Multiply):
        listed = value.left if type(value.left) is cst.List else value.right
        return (
            type(listed) is cst.List
            and len(listed.elements) == 1
            and literal_bool(listed.elements[0].value) is True
        )
    return literal_bool(value) is True


def _uncut(name: str, value: cst.BaseExpression) -> bool:
    """Say whether a flag only says no time limit cut the episode (``truncated = False``).

    Gymnasium's ``terminated`` then says whether the episode ended.
    """
    return "truncat" in name.lower() and literal_bool(value) is False


def _ends(name: str) -> bool:
    return any(word in name.lower() for word in TERMINATION_WORDS)
