"""Online RL by hand: a loop that generates, acts in an environment or with tools, feeds the result back."""

from __future__ import annotations

import libcst as cst

from arb_audit.analyzer.calls import (
    ENVIRONMENT_WORDS,
    asks_helper,
    dict_field,
    discarded,
    environment_plays,
    generates,
    is_env_step,
    literal_field,
    method,
    names_an_agent,
    runs_agent_loop,
    runs_episodes,
)
from arb_audit.analyzer.detector import FileContext, Invalid, RouteDetector, Valid
from arb_audit.analyzer.detectors.config_module import TURN_LIMITS, literal_off, written_turns
from arb_audit.analyzer.loss_slice import words
from arb_audit.analyzer.names import last_name
from arb_audit.analyzer.walk import descendants

LOOP_CLASS_WORDS = frozenset({"loop", "rollout", "rollouts"})
"""Words of a class that is a trainer's rollout loop (an agent loop worker, a rollout manager)."""
TOOL_ROLES = frozenset({"tool", "observation", "environment", "env", "ipython", "function"})
"""Roles of a turn a tool or an environment writes (not a user's)."""
FEEDBACK_ROLES = frozenset({"tool", "user", "observation", "environment", "env", "ipython", "function"})
"""Chat roles of a turn that comes from outside the policy: a tool's result, an environment's
observation, a (simulated) user's reply."""
TOOL_CALLS = "tool_calls"
"""The field of a chat message holding the tool calls the model asked for (OpenAI's and vLLM's API)."""
USER_TURN = "user_turn"
"""Variant of an ``interactive`` finding whose loop only appends user turns."""
PROMPT_BUILDERS = frozenset({"apply_chat_template", "rollout"})
"""Methods that turn the conversation so far into the policy's next input (or sample from it)."""
NOT_TRAINING_SCOPES = frozenset(
    {
        "eval",
        "val",
        "evaluate",
        "evaluation",
        "test",
        "demo",
        "validate",
        "validation",
        "benchmark",
        "inference",
        "play",
        "chat",
    }
)
"""Words of a function name whose loops serve evaluation or a demo, not the rollouts a stage trains on
(TAXONOMY.md: such loops do not make a file online RL)."""
TRAINER_SCOPES = NOT_TRAINING_SCOPES - {"play"}
"""Those words in a trainer's own method: one that plays (``_play_negotiation``) plays the episodes it
trains on, not a demo."""
TRAINER_ENDINGS = ("Trainer", "trainer", "TRAINER")
"""How a class named for a trainer ends (its last word)."""
DATA_SCOPES = frozenset({"data", "dataset", "datasets", "prompts"})
"""Words of a function that builds a dataset (``build_grpo_dataset``): an agent's episodes played
there are data made before training (prompts decomposed from its traces), not the rollouts trained on."""
AGENT_TURNS = TURN_LIMITS | {"max_steps", "max_iterations", "max_rounds", "max_tool_calls", "tools"}
"""Keywords that give an agent several turns: a limit on its steps, or tools to call between them."""
ROLLOUT_WORDS = frozenset({"rollout", "rollouts"})
"""Words of a class or function that plays episodes (``RolloutCollector``, ``run_rollouts``)."""
ENVIRONMENT_KEYWORDS = frozenset({"env", "envs", "environment", "environments"})
"""Keywords that hand an environment to be stepped (not ``env_id``, ``environment_asynchronous``)."""
TEXT_VALUES = (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)
"""Literal text: an environment's name handed (``env="alfworld"``), not an environment."""
TRAINING_HANDS = frozenset({"trainer", "train", "fit", "learn", "learner"})
"""Words of a call that trains on the episodes of an environment it is handed (not ``rollout``: an
evaluation's helper is as often named so)."""
SETTINGS_WORDS = frozenset({"config", "cfg", "args", "arguments", "params", "settings", "spec"})
"""Words of a class that holds settings (``RolloutConfig``): given an environment's name, it plays none."""


class MultiTurnLoop(RouteDetector):
    """A ``for``/``while`` loop whose body generates with the policy and takes the world's answer back.

    This is the shape of a multi-turn rollout, whether written for a custom ``rollout_func``, a
    hand-written policy-gradient loop or an agent framework: the model generates, then either an
    environment is stepped with the action (``env.step(action)``) or a turn from outside the model —
    a tool result, an observation, a user's reply — is appended to the conversation the next turn is
    built from (``messages.append({"role": "tool", ...})``). ``optimizer.step()`` and
    ``scheduler.step()`` take no action and are not environment steps; a loop that only generates is
    not reported, nor one inside a function named for evaluation, testing or a demo (such loops do not
    produce what a stage trains on). A loop that hands an environment to a helper named for playing
    its episodes (``batch_interact_environment(agent=a, env=env)``) runs them there, and so does one
    sampling through a helper named for the model's turns with tools (``manager.run_llm_loop(batch)``,
    ``multi_turn_rollout(...)``), whose loop lives in another file. A helper named for an
    environment's answer and handed the outputs (``self.get_batch_env_outputs(lm_outputs)``) steps it,
    and so does any call whose result is unpacked as an environment's answer is (``next_obs, dones, _ =
    self.execute_predictions(responses)``).
    """

    TRIGGERS = ("step", "role", "tool", "nteract", "pisode", "ollout", "Env(", "Environment(")

    VALID = (
        # a remote call handed a temperature is no sampling request
        Valid(
            "def tune(self, actor):\n    while True:\n        actor.update.remote(0, temperature=0.7)\n"
            "        messages.append({'role': 'tool', 'content': report()})\n"
        ),
        # (an environment's id is no environment handed; a config of rollouts plays nothing)
        Valid("collector = RolloutCollector(policy=policy, env_id=name, max_steps=8)\n"),
        Valid("env = BanditEnv(arms=10, max_turns=1)\ntrainer = Trainer(model, env=env)\n"),
        # built for a benchmark, or for a reward's sandbox: no trainer is handed it as its environment
        Valid("shop = WebShopEnv(max_turns=10)\nprint(run_benchmark(model, shop))\n"),
        Valid("env = WebShopEnv(split='test', max_turns=15)\nscores = run_rollouts(trainer.model, env)\n"),
        Valid("box = CodeExecEnv(max_steps=8)\ntrainer = RayPPOTrainer(config=cfg, reward_env=box)\n"),
        Valid("rollout_cfg = RolloutConfig(env=env, max_steps=30, temperature=0.7)\n"),
        Valid("collector = RolloutCollector(policy=policy, env='alfworld', max_steps=8)\n"),
        # a conversation of stored answer steps built and templated turn by turn, no model sampled
        Valid(
            "for k in range(len(steps)):\n    text = question + steps[0] if k == 0 else steps[k]\n"
            "    conversation.append({'content': text, 'role': 'user'})\n"
            "    ids = tokenizer.apply_chat_template(conversation, return_tensors='pt')\n"
            "    scores.append(prm(ids))\n"
        ),
        # an environment's episode counter read in a loop plays nothing
        Valid("for s in scenarios:\n    n = env.episode_count()\n    env.log_episode(i, {'reward': r})\n"),
        Valid(
            "def play_game(model, prompt):\n    history = [{'role': 'system', 'content': prompt}]\n"
            "    for turn in range(4):\n        reply = model.generate(history)\n"
            "        history.append({'role': 'user', 'content': opponent(reply)})\n"
        ),
        Valid("for batch in loader:\n    out = model.generate(batch)\n    optimizer.step()\n"),
        Valid(
            "class PPOTrainerForChat(PPOTrainer):\n    def ppo_train(self):\n        for batch in loader:\n"
            "            responses = self.generate(batch)\n"
            "            self.step(queries, responses, rewards)\n"
        ),
        Valid(
            "for question, answer in history:\n"
            "    turns.append({'role': 'user', 'content': question})\n"
            "    text = tokenizer.apply_chat_template(turns, add_generation_prompt=True)\n"
            "    turns.append({'role': 'assistant', 'content': answer})\n"
        ),
        Valid(
            "for batch in ppo_trainer.dataloader:\n    responses = ppo_trainer.generate(batch['query'])\n"
            "    stats = ppo_trainer.step(batch['query'], responses, rewards)\n"
        ),
        Valid("for prompt in prompts:\n    outputs.append(llm.generate(prompt))\n"),
        Valid("obs = env.reset()\nobs, r, done, info = env.step(0)\n"),
        Valid("trajectories = batch_interact_environment(agent=agent, env=env)\n"),
        Valid(
            "def evaluate(agent, env):\n    for i in range(3):\n"
            "        scores.append(interact_environment(agent, env))\n"
        ),
        Valid("for i in range(3):\n    rollouts = collect_rollouts(policy, prompts)\n"),
        # one word, "rollout", may sample one answer to the prompt an environment object hands out
        Valid("for _ in range(n):\n    experiences.append(rollout(model, tokenizer, environment))\n"),
        Valid("for f in funcs:\n    f()(env)\n"),
        Valid(
            "for seed in range(20):\n    traj = run_eval_episode(model, tok, env, seed=seed)\n"
            "    scores.append(traj.reward)\n"
        ),
        # a helper of this file named for episodes, whose body steps a control task without a model's
        # turns: its name is not what decides
        Valid(
            "def collect_rollouts(policy, env, n=2048):\n    obs = env.reset()\n"
            "    for _ in range(n):\n        a = policy(obs).sample()\n        obs, r, d, i = env.step(a)\n"
            "for it in range(100):\n    batch = collect_rollouts(policy, env)\n    update(batch)\n"
        ),
        Valid("for epoch in range(3):\n    train_loop(model, loader)\n    out = llm_rollout(prompts)\n"),
        Valid("def _validate(self):\n    for batch in loader:\n        out = manager.run_llm_loop(batch)\n"),
        # generating tool calls as text (a dataset of them), nothing run with them
        Valid("for batch in loader:\n    calls = generate_tool_calls(model, batch)\n"),
        # the tool loop's result thrown away unread, replaced by plain samples (next line, after a ';',
        # in an else block); a helper offering tool schemas in one turn
        Valid(
            "for i in range(n):\n    out = generate_with_tool_calls(model, inputs, max_rounds=2)\n"
            "    out = model.generate(**inputs)\n    outs.append(out)\n"
        ),
        Valid(
            "for i in range(n):\n    out = generate_with_tool_calls(model, x); out = model.generate(x)\n"
            "    if plain:\n        pass\n    else:\n        res = generate_with_tool_calls(model, x)\n"
            "        res = model.generate(x)\n"
        ),
        Valid("for batch in loader:\n    outs = generate_with_tools(model, batch, tools=schemas)\n"),
        Valid(
            "def agent_loop(agent, prompts):\n    return agent.model.generate(prompts)\n"
            "for batch in loader:\n    seqs = agent_loop(agent, batch)\n    loss.backward()\n"
        ),
        Valid("for batch in loader:\n    out = single_turn_rollout(policy, batch)\n"),
        Valid("for batch in loader:\n    b = turn_rollouts_into_batch(rollouts)\n"),
        Valid(
            "class ChatFormatter:\n    def render(self, msgs, tok):\n"
            "        return tok.apply_chat_template(msgs)\n"
            "    def add_tool(self, msgs, r):\n        msgs.append({'role': 'tool', 'content': r})\n"
        ),
        Valid(
            "from nemo_rl.experience.rollouts import run_multi_turn_rollout\n"
            "for batch in loader:\n    out = run_multi_turn_rollout(policy, batch, max_rollout_turns=n)\n"
        ),
        Valid("for row in rows:\n    for tc in row.tool_calls:\n        names.append(tc.name)\n"),
        Valid(
            "class Rollout:\n    async def run(self, req):\n        while turns < self.max_turns:\n"
            "            req.add_tool_response_messages(self.tok, await self.execute(req.calls))\n"
            "            out = await self._handle_call(req)\n"
            "    async def _handle_call(self, req):\n        return self.cache[req.id]\n"
        ),
        Valid(
            "for batch in loader:\n    out = model.generate(batch)\n"
            "    states, finished = decode_states(out), out.eos\n"
        ),
        Valid(
            "for batch in loader:\n    outs = policy.generate(batch['prompt'])\n"
            "    rewards = env_feedback(outs, batch['tests'])\n    loss = pg_loss(outs, rewards)\n"
        ),
        Valid("for cfg in configs:\n    out = llm.generate(prompt)\n    env_config = get_env_config(cfg)\n"),
        Valid(
            "def evaluate(model, tasks):\n    for turn in range(5):\n"
            "        reply = model.generate(msgs)\n"
            "        msgs.append({'role': 'tool', 'content': run(reply)})\n"
        ),
        Valid(
            "for ex in data:\n    msgs.append({'role': 'assistant', 'content': ex})\n"
            "    out = model.generate(msgs)\n"
        ),
        # an agent given one step, or no tools, takes a single turn
        Valid("agent = ChatAgent(model=policy, max_steps=1)\nanswer = agent.run(question)\n"),
        Valid("agent = CodeAgent(model=policy, tools=[])\n"),
        Valid("rollout = SingleTurnRollout(sampler=s, max_turns=4)\nloop = AgentLoop(max_turns=1)\n"),
        Valid("def build_grpo_dataset(model):\n    agent = ToolAgent(model=model, max_steps=6)\n"),
        # an episode played to evaluate, not to train on
        Valid("async def evaluate(env, agent_fn, task):\n    return await env.run_episode(agent_fn, task)\n"),
    )
    INVALID = (
        # one episode of an environment, or an agent with a step limit or tools, outside any loop:
        # several turns, qualifying the rollouts of a stage the file trains
        Invalid(
            "async def solve(model, task_id):\n    env = TauBenchEnv(client=model.client())\n"
            "    episode = await env.run_episode(task_id=task_id)\n    return episode.messages\n",
            "interactive",
            None,
            USER_TURN,
        ),
        # a remote engine asked for samples with vLLM's sampling settings, the tool's result appended as
        # the next turn (OpenRLHF-style experience makers)
        Invalid(
            "def make_experience(self, llm, sp, ids):\n    while True:\n"
            "        llm.add_requests.remote(0, sampling_params=sp, prompt_token_ids=ids)\n"
            "        out = ray.get(llm.get_responses.remote(0))\n"
            "        if '</tool_call>' not in out:\n            break\n"
            "        messages.append({'role': 'tool', 'content': execute_tool(out)})\n",
            "interactive",
        ),
        # in a function named for a rollout: what a trainer's rollouts are made of
        Invalid(
            "async def art_rollout(model, task_id):\n    env = TauBenchEnv(client=model.client())\n"
            "    episode = await env.run_episode(task_id=task_id)\n    return episode.messages\n",
            "interactive",
        ),
        Invalid(
            "agent = MultimodalAgent(model=policy, max_steps=MAX_STEPS)\n", "interactive", None, USER_TURN
        ),
        Invalid("agent = create_react_agent(llm, tools)\n", "interactive", None, USER_TURN),
        # an environment given several turns, handed to the trainer that steps it
        Invalid(
            "env = DBToolEnv(mode='train', max_turns=config.tool.max_turns)\n"
            "trainer = RayAgentTrainer(config=config, env=env)\n",
            "interactive",
            None,
            USER_TURN,
        ),
        Invalid(
            "rollout = MultiTurnRollout(sampler=s, max_turns=MAX_TURNS)\n", "interactive", None, USER_TURN
        ),
        Invalid(
            "collector = RolloutCollector(policy=policy, env=env, max_steps=cfg.max_steps)\n",
            "interactive",
            None,
            USER_TURN,
        ),
        Invalid(
            "class SelfPlayGRPOTrainer(GRPOTrainer):\n    def _play_game(self, prompt):\n"
            "        history = [{'role': 'system', 'content': prompt}]\n        for turn in range(4):\n"
            "            reply = self.model.generate(history)\n"
            "            history.append({'role': 'user', 'content': self.opponent(reply)})\n",
            "interactive",
        ),
        Invalid(
            "class ToolAgent:\n    def answer(self, q):\n        return self.llm.generate(q)\n"
            "    def observe(self, msgs, result):\n"
            "        msgs.append({'role': 'tool', 'content': result})\n",
            "interactive",
            None,
            USER_TURN,
        ),
        Invalid(
            "class SearchAgentLoop(AgentLoopBase):\n"
            "    async def generate_llm_response(self, ctx):\n"
            "        return await self.generate(ctx['ids'], sampling_params=self.sp)\n"
            "    async def generate_tool_response(self, ctx, text):\n"
            "        for resp in await self.run_tools(text):\n"
            "            message = {'role': 'tool', 'content': resp.text}\n"
            "            ctx['messages'].append(message)\n",
            "interactive",
        ),
        Invalid(
            "for batch in self.train_dataloader:\n"
            "    out = generation_manager.run_llm_loop(gen_batch, initial_input_ids=ids)\n"
            "    self.actor_rollout_wg.update_actor(out)\n",
            "interactive",
        ),
        # its result kept in a store it was handed, which the rebinding reads
        Invalid(
            "for step in range(n):\n"
            "    batch = rollout_with_tool_calls(policy, envs, buffer=buffer)\n"
            "    batch = buffer.sample(64)\n    update(batch)\n",
            "interactive",
        ),
        # its result read after a ';' before it is rebound
        Invalid(
            "for batch in loader:\n"
            "    outs = vllm_generate_with_tool_calls(llm, prompts=batch); buffer.extend(outs)\n"
            "    outs = llm.generate(batch)\n",
            "interactive",
        ),
        # a generation helper named for the tool calls it interleaves
        Invalid(
            "from .tool_generation import vllm_generate_with_tool_calls\n"
            "for batch in self.train_dataloader:\n"
            "    outs = vllm_generate_with_tool_calls(self.llm, prompts=batch, max_rounds=6)\n"
            "    self.update(outs)\n",
            "interactive",
        ),
        # an environment's own episode method, handed the policy's response function
        Invalid(
            "async def collect(self, scenarios):\n    for s in scenarios:\n"
            "        traj = await self.environment.run_episode(agent_fn, s)\n",
            "interactive",
        ),
        # a helper named for playing an episode, handed the environment (its loop in another file)
        Invalid(
            "def rollout_func(prompts, trainer):\n    for prompt in prompts:\n"
            "        ep = common.run_episode(trainer.model, processor, env, max_turns=8)\n",
            "interactive",
        ),
        Invalid(
            "for i in range(iterations):\n"
            "    trajectories = batch_interact_environment(agent=agent, env=env, n=rollout_size)\n"
            "    buffer.extend(trajectories)\n    trainer.update(buffer)\n",
            "interactive",
        ),
        Invalid(
            "async def rollout(client, game):\n    while not game.over:\n"
            "        msg = await client.chat.completions.create(messages=messages)\n"
            "        apply_move(game, msg)\n"
            "        messages.append({'role': 'user', 'content': render(game)})\n",
            "interactive",
        ),
        Invalid(
            "for turn in range(max_turns):\n"
            "    action = model.generate(obs)\n"
            "    obs, reward, done, info = env.step(action)\n"
            "    if done:\n        break\n",
            "interactive",
        ),
        Invalid(
            "while not done:\n    text = llm.generate(messages)\n    result = env.step(parse(text))\n",
            "interactive",
        ),
        Invalid(
            "class Rollout:\n    async def run(self, req):\n        while turns < self.max_turns:\n"
            "            if req.state == CALLING:\n                results = await self.execute(req.calls)\n"
            "                req.add_tool_response_messages(self.tok, results)\n"
            "            else:\n                out = await self._handle_engine_call(req)\n"
            "    async def _handle_engine_call(self, req):\n"
            "        return await self._engine.async_generate(input_ids=req.ids)\n",
            "interactive",
        ),
        Invalid(
            "def run_llm_loop(self, batch):\n    for step in range(self.config.max_turns):\n"
            "        out = self._generate_with_gpu_padding(batch)\n"
            "        next_obs, dones, void = self.execute_predictions(out, self.tokenizer.pad_token)\n"
            "def _generate_with_gpu_padding(self, batch):\n    return self.wg.generate_sequences(batch)\n",
            "interactive",
        ),
        Invalid(
            # an agent class's own turn loop answers whoever asks it: it qualifies a stage's rollouts
            "class ReActAgent:\n    def run(self, question):\n"
            "        messages = [{'role': 'user', 'content': question}]\n"
            "        for _ in range(self.max_steps):\n            reply = self.llm.generate(messages)\n"
            "            messages.append({'role': 'tool', 'content': self.call_tool(reply)})\n",
            "interactive",
            None,
            USER_TURN,
        ),
        Invalid(
            "class ToolAgent:\n    def solve(self, msgs):\n        for _ in range(6):\n"
            "            text = self.respond(msgs)\n"
            "            msgs.append({'role': 'tool', 'content': run_tool(text)})\n"
            "    def respond(self, msgs):\n        return self.model.generate(msgs)\n",
            "interactive",
            None,
            USER_TURN,
        ),
        Invalid(
            "def rollout(self):\n    for turn in range(self.max_turns):\n"
            "        outs = self.actor.generate_sequences(self.prompts(self.env_outs))\n"
            "        self.env_outs = self.get_batch_env_outputs(outs)\n",
            "interactive",
        ),
        Invalid(
            "def rollout(engine, tok, messages):\n    for turn in range(max_turns):\n"
            "        prompt = tok.apply_chat_template(messages, add_generation_prompt=True)\n"
            "        text = engine.rollout(prompt)\n"
            "        messages.append({'role': 'assistant', 'content': text})\n"
            "        for call in parse_tool_calls(text):\n"
            "            messages.append({'role': 'tool', 'content': execute_tool(call)})\n",
            "interactive",
        ),
        Invalid(
            "async def tool_workflow(llm, tools):\n    while not done and turn < max_turns:\n"
            "        out = await llm.generate_async.remote(prompt)\n"
            "        result = await agent_step(observation, out, tools)\n",
            "interactive",
        ),
        Invalid(
            "from litellm import acompletion\nasync def rollout(scenario):\n    while True:\n"
            "        choice = (await acompletion(messages=traj.messages)).choices[0]\n"
            "        traj.messages.append(tool_response(search(choice), choice.message))\n",
            "interactive",
        ),
        Invalid(
            "async def tool_rollout(llm, messages):\n    for turn in range(8):\n"
            "        call = await llm.chat(messages)\n"
            "        for tc in call.output.tool_calls:\n            await run_tool(tc, messages)\n",
            "interactive",
        ),
        Invalid(
            "async def guessing_rollout(llm, game):\n    for turn in range(13):\n"
            "        if turn:\n            messages.append({'role': 'user', 'content': hint(game)})\n"
            "        call = await llm_async_generate(llm, messages)\n",
            "interactive",
        ),
        Invalid(
            "async def generate_sample(self, state):\n    while True:\n"
            "        state = await self.rollout_ctl.generate.remote(state)\n"
            "        calls = self.extract_tool_calls(state)\n        if not calls:\n            break\n"
            "        for call in calls:\n"
            "            tool_message = {'role': 'tool', 'content': run(call)}\n"
            "            tool_messages.append(tool_message)\n",
            "interactive",
        ),
        Invalid(
            "async def run_agent(client, messages):\n    for _ in range(4):\n"
            "        r = await client.chat.completions.create(messages=messages)\n"
            "        if reward(r) == 1:\n            break\n"
            "        messages.append({'role': 'user', 'content': 'wrong, try again'})\n",
            "interactive",
        ),
    )

    def __init__(self, context: FileContext) -> None:
        super().__init__(context)
        self.loops: list[list[bool]] = []
        """Per open loop: [generates, steps an environment, appends a tool turn, appends a user turn,
        appends the loop's own item as the user turn, samples from a model (not only builds its
        prompt)]."""
        self.functions: list[str] = []
        self.classes_named: list[str] = []
        """Names of the classes around the node being walked."""
        self.targets: list[set[str]] = []
        """Names each open ``for`` loop binds (a prompt taken from a list)."""
        self.typed = False
        """The file reads a person's reply (``input()``): its user turns are a chat's."""
        self.played: tuple[cst.Call, cst.CSTNode | None] | None = None
        """A call in a loop handing an environment to a helper that plays its episodes."""
        self.loop_helpers: list[tuple[cst.Call, cst.CSTNode | None]] = []
        """Calls in a loop of helpers named for the model's turns with tools (``run_llm_loop``): they
        play episodes when the helper is not defined in this file (one defined here is read here)."""
        self.defined: set[str] = set()
        """Names of the functions and methods the file defines."""
        self.places: dict[int, dict[int, tuple[int, int]]] = {}
        """Where the statements of each block asked about sit (see :func:`calls.discarded`)."""
        self.classes: list[list[bool]] = []
        """Per open class: [one of its methods generates, one appends a tool's or environment's turn]."""
        self.tool_class: cst.ClassDef | None = None
        """A class whose methods both generate and append tool turns (an agent loop's hooks)."""
        self.roles: dict[str, str | None] = {}
        """The role of the message each plain name was last assigned (``tool_message = {"role": "tool"}``)."""
        self.pending: list[tuple[cst.CSTNode, cst.CSTNode | None, bool, bool, bool]] = []
        """Loops to report at the end: (loop, statement, steps, appends feedback, appends a user turn).
        A loop whose user turns are its own items is not kept unless it steps or appends feedback."""
        self.called: list[set[str]] = []
        """Per open loop: the names of the functions and methods it calls (``self._handle_engine_call``)."""
        self.generating: set[str] = set()
        """Names of the file's functions and methods whose own body generates."""
        self.unresolved: list[tuple[cst.CSTNode, cst.CSTNode | None, bool, bool, bool, set[str], bool]] = []
        """Loops that step or take a turn back but generate only, if at all, through the file's own
        helpers (defined anywhere in the file): as ``pending``, with the names they call and whether
        a class or function around them is named for a rollout loop."""
        self.qualifying: set[int] = set()
        """Ids of pending loops that only qualify a stage's rollouts (reported as ``USER_TURN``)."""
        self.episode: tuple[cst.Call, cst.CSTNode | None, bool] | None = None
        """A call outside any loop that plays one episode of several turns (``env.run_episode(task)``,
        ``ReActAgent(model=policy, max_steps=6)``), and whether a function around it is named for a
        rollout."""
        self.turn_environments: dict[str, tuple[cst.Call, cst.CSTNode | None]] = {}
        """Names bound to an environment built with several turns, with the call and its statement."""

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.append(node.name.value)
        self.defined.add(node.name.value)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append([False, False])
        self.classes_named.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.classes_named.pop()
        generates, tool_turns = self.classes.pop()
        named = set(words(original_node.name.value))
        if generates and tool_turns and not named & NOT_TRAINING_SCOPES and self.tool_class is None:
            self.tool_class = original_node

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.functions.pop()

    def visit_For(self, node: cst.For) -> None:
        if self.loops and any(
            type(n) is cst.Attribute and n.attr.value == TOOL_CALLS
            for n in (node.iter, *descendants(node.iter))
        ):
            # each tool call of the model's last message is executed (``for tc in out.tool_calls:
            # await handler(tc)``): the results go back to the conversation, wherever that is written
            for seen in self.loops:
                seen[2] = True
        self.loops.append([False] * 6)
        self.called.append(set())
        self.targets.append(
            {n.value for n in (node.target, *descendants(node.target)) if type(n) is cst.Name}
        )

    def visit_While(self, node: cst.While) -> None:
        self.loops.append([False] * 6)
        self.called.append(set())
        self.targets.append(set())

    def visit_Assign(self, node: cst.Assign) -> None:
        self._bind([t.target for t in node.targets], node.value)
        if self.loops and isinstance(node.value, cst.Call | cst.Await) and _answers_as_environment(node):
            # ``next_obs, dones, info = self.execute_predictions(actions)``: whatever the call is named,
            # it answers as an environment does (observations and end-of-episode flags)
            for seen in self.loops:
                seen[1] = True

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind([node.target], node.value)

    def _bind(self, targets: list[cst.BaseExpression], value: cst.BaseExpression) -> None:
        if not self.loops and not self.classes:
            return  # (a message appended in a turn loop, or by an agent's hook, is built there)
        # (only a dict or a call can be a message; most assignments are neither, and are not read)
        role = _role(value) if isinstance(value, cst.Dict | cst.Call) else None
        for target in targets:
            name = target.value if type(target) is cst.Name else None
            if name is not None and (role is not None or name in self.roles):
                self.roles[name] = role

    def visit_Call(self, node: cst.Call) -> None:
        self.typed = self.typed or (type(node.func) is cst.Name and node.func.value == "input")
        if self._environment_with_turns(node):
            # ``env = DBToolEnv(..., max_turns=cfg.max_turns)``: kept until a trainer is handed it
            statement = self.context.statements[-1] if self.context.statements else None
            if type(statement) is cst.Assign and statement.value is node and len(statement.targets) == 1:
                target = statement.targets[0].target
                if type(target) is cst.Name:
                    self.turn_environments[target.value] = (node, statement)
        elif self.episode is None and not self._not_training() and (handed := self._hands_turns(node)):
            # a trainer handed an environment of several turns: what it trains on are
            # that environment's episodes (an environment built for a benchmark, or only inside a
            # reward, is handed to no trainer)
            self.episode = (*handed, False)
        if (
            not self.loops
            and (self.episode is None or not self.episode[2])
            and (environment_plays(node) or self._agent_with_turns(node))
            and not self._not_training()
            and not any(set(words(f)) & DATA_SCOPES for f in self.functions)
        ):
            # the first, or the first in a function named for a rollout: what a trainer's rollouts are
            rollout = any(set(words(f)) & LOOP_CLASS_WORDS for f in self.functions)
            if self.episode is None or rollout:
                statement = self.context.statements[-1] if self.context.statements else None
                self.episode = (node, statement, rollout)
        if self.loops and not self.played and not self._not_training():
            statement = self.context.statements[-1] if self.context.statements else None
            if runs_episodes(node) and not set(words(last_name(node.func))) & TRAINER_SCOPES:
                # (``run_eval_episode(model, env)``: episodes played to evaluate, not trained on)
                self.played = (node, statement)
            elif (
                runs_agent_loop(node, self.names)
                and not any(c is node for c, _ in self.loop_helpers)
                # (its episodes thrown away unread, replaced by plain samples, feed nothing)
                and not discarded(node, self.context.statements, self.places)
            ):
                self.loop_helpers.append((node, statement))
        if not self.loops and not self.classes and not self.functions:
            return
        generation = generates(self, node) or asks_helper(self, node) or method(node) in PROMPT_BUILDERS
        if generation and self.functions and method(node) not in PROMPT_BUILDERS:
            self.generating.add(self.functions[-1])
        if not self.loops and not self.classes:
            return
        answers = _environment_answers(node) and not _scores(self.context.statements[-1:])
        step, role = is_env_step(node) or answers, _feedback_role(node, self.roles)
        if self.classes and not self._not_training():
            # a class whose hooks generate and turn tool calls into tool turns (an agent loop's
            # subclass: its base alternates them), whether or not one loop holds both
            seen_in_class = self.classes[-1]
            seen_in_class[0] = seen_in_class[0] or (generation and method(node) not in PROMPT_BUILDERS)
            seen_in_class[1] = seen_in_class[1] or role in TOOL_ROLES
        if not self.loops:
            return
        # a user turn that is the loop's own item (``for prompt in prompts``) is the next prompt of a list
        listed = role == "user" and _content_name(node) in set().union(*self.targets)
        callee = node.func.attr if type(node.func) is cst.Attribute else node.func
        if not generation and type(callee) is cst.Name:
            for called in self.called:
                called.add(callee.value)
        for seen in self.loops:
            seen[0] = seen[0] or generation
            seen[1] = seen[1] or step
            seen[2] = seen[2] or role not in (None, "user")
            seen[3] = seen[3] or role == "user"
            seen[4] = seen[4] or listed
            seen[5] = seen[5] or (generation and method(node) not in PROMPT_BUILDERS)

    def _leave(self, node: cst.For | cst.While) -> None:
        self.targets.pop()
        called = self.called.pop()
        generation, step, feedback, user, listed, sampled = self.loops.pop()
        if not (step or feedback or user) or self._not_training():
            return
        if (listed or (generation and not sampled)) and not (step or feedback):
            # the user turns are the loop's own items: a recorded conversation replayed turn by turn
            # (formatting a dataset's dialogues), not a world answering the policy; nor is a
            # conversation built turn by turn and only templated, no model sampled in the loop
            # (a process reward model scoring each step of stored answers)
            return
        statement = self.context.statements[-1] if self.context.statements else None
        if not generation:
            if called:
                # the model may be asked through a helper of this file, defined below the loop
                # (named for a rollout loop or not: see ``leave_Module``)
                rollout = any(set(words(n)) & LOOP_CLASS_WORDS for n in self.classes_named) or any(
                    "loop" in words(n) for n in self.functions
                )
                self.unresolved.append((node, statement, step, feedback, user, called, rollout))
            return
        self.pending.append((node, statement, step, feedback, user))
        if self.classes_named and names_an_agent(self.classes_named[-1]):
            # an agent class's own turn loop answers whoever asks it (a user, a benchmark, a teacher's
            # traces): as for an agent whose turns a helper generates, it qualifies the rollouts of a
            # stage the file trains and makes nothing else online RL
            self.qualifying.add(id(node))
        self.loops = [[False] * 6 for _ in self.loops]  # report the innermost loop only

    def leave_Module(self, original_node: cst.Module) -> None:
        accepted: list[cst.CSTNode] = []
        for node, statement, step, feedback, user, called, rollout in self.unresolved:  # innermost first
            if called & self.generating and not any(n is a for n in descendants(node) for a in accepted):
                accepted.append(node)
                self.pending.append((node, statement, step, feedback, user))
                if not rollout:
                    # an agent whose turns a helper of its own generates (``text = self.respond(msgs)``)
                    # may answer a benchmark or write a teacher's traces: as for an agent class, it
                    # qualifies the rollouts of a stage the file trains, and makes nothing else online
                    # RL; in a class named for a rollout loop (``MCPSGLangRollout``), or a function
                    # named a loop (``run_llm_loop``), it plays them
                    self.qualifying.add(id(node))
        if (
            self.played is not None
            and not environment_plays(self.played[0])
            and last_name(self.played[0].func) in self.defined
        ):
            # a helper of this file named for playing episodes (``collect_rollouts(policy, env)``):
            # its own body, read above, says whether its episodes are a model's turns (a CartPole
            # loop is not)
            self.played = None
        if self.played is None:
            self.played = next(
                ((c, at) for c, at in self.loop_helpers if last_name(c.func) not in self.defined), None
            )
        if self.played is None and self.tool_class is not None and not self.pending:
            named = set(words(self.tool_class.name.value))
            message = (
                f"{self.tool_class.name.value} generates and answers the model's tool calls with tool turns"
            )
            # Named for a trainer's rollout loop (``Searchr1AgentLoopWorker``), the class is online
            # RL's component; any other (an agent answering a benchmark, or writing a teacher's traces)
            # qualifies the rollouts of a stage the file trains, and makes nothing else online RL.
            variant = None if named & LOOP_CLASS_WORDS else USER_TURN
            self.report(
                self.tool_class,
                "interactive",
                message,
                statement=self.tool_class,
                interactive=True,
                variant=variant,
            )
        if self.played is None and self.episode is not None and self.tool_class is None and not self.pending:
            call, at, rollout = self.episode
            message = f"{last_name(call.func)} plays an episode of several turns (not in a loop of this file)"
            # one episode is several turns; in a function named for a rollout (``art_rollout``) it is
            # what a trainer's rollouts are made of (online RL's component), elsewhere it qualifies
            # the rollouts of a stage the file trains and makes nothing else online RL
            variant = None if rollout else USER_TURN
            self.report(call, "interactive", message, statement=at, interactive=True, variant=variant)
        if self.played is not None and not self.pending:
            call, at = self.played
            message = (
                f"a loop hands an environment to {last_name(call.func)}, which plays its episodes"
                if runs_episodes(call)
                else f"a loop samples through {last_name(call.func)}, named for the model's turns with tools"
            )
            self.report(call, "interactive", message, statement=at, interactive=True)
        for node, statement, step, feedback, user in self.pending:
            # a user turn the code writes itself (a game's board after the move, a simulated user) is
            # the world's answer; one a person types (``input()``) is a chat demo's next prompt
            written = user and not self.typed and not (step or feedback)
            how = (
                "steps an environment"
                if step
                else "appends a tool or observation turn to the conversation"
                if feedback
                else "appends a user turn it writes itself (the world's answer) to the conversation"
                if written
                else "appends a user turn to the conversation"
            )
            # A user turn alone may be a chat demo's next prompt: it qualifies a training stage's
            # rollouts, but does not make a file that trains nothing an environment component.
            variant = USER_TURN if not (step or feedback or written) or id(node) in self.qualifying else None
            message = f"a loop generates with the policy and {how}"
            self.report(node, "interactive", message, statement=statement, interactive=True, variant=variant)

    def _agent_with_turns(self, node: cst.Call) -> bool:
        """Say whether ``node`` builds an agent or a rollout loop given several turns (or tools).

        ``MultimodalAgent(model=policy, max_steps=MAX_STEPS)``, ``create_react_agent(llm, tools)``,
        ``MultiTurnRollout(sampler=s, max_turns=MAX_TURNS)``: a step limit above one, or tools; the
        model's turns alternate with its tools' or the world's answers.
        """
        turns = any(
            # (handed its tools in order: ``create_react_agent(llm, tools)``)
            (type(arg.value) is cst.Name and "tools" in words(arg.value.value))
            if arg.keyword is None
            else _several_turns(arg)
            for arg in node.args
        )
        # (the arguments first: few calls are given turns or tools, and the name's reading costs more)
        if not turns:
            return False
        named = words(last_name(node.func))
        return (
            named[-1:] == ("agent",)
            or runs_agent_loop(node, self.names)
            # a rollout collector handed the environment it steps (``RolloutCollector(policy=p,
            # env=env, max_steps=cfg.max_steps)``): its episodes are the world's turns and the model's
            or (
                bool(set(named) & ROLLOUT_WORDS)
                and not set(named) & SETTINGS_WORDS  # (``RolloutConfig(env="alfworld")``: settings)
                and any(
                    a.keyword is not None
                    and a.keyword.value in ENVIRONMENT_KEYWORDS
                    and not isinstance(a.value, TEXT_VALUES)
                    for a in node.args
                )
            )
        )

    def _environment_with_turns(self, node: cst.Call) -> bool:
        """Say whether a call builds an environment given a limit of several turns (``XEnv(max_turns=8)``)."""
        return words(last_name(node.func))[-1:] in (("env",), ("environment",)) and any(
            arg.keyword is not None and _several_turns(arg) for arg in node.args
        )

    def _hands_turns(self, node: cst.Call) -> tuple[cst.Call, cst.CSTNode | None] | None:
        """Return the environment of several turns a trainer's call is handed, with its statement.

        As the environment (``env=env``, ``environment=...``) or in order, built there or bound before.
        """
        if not set(words(last_name(node.func))) & TRAINING_HANDS:
            return None
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value not in ENVIRONMENT_KEYWORDS:
                continue
            if type(arg.value) is cst.Name and arg.value.value in self.turn_environments:
                return self.turn_environments[arg.value.value]
            if type(arg.value) is cst.Call and self._environment_with_turns(arg.value):
                return arg.value, self.context.statements[-1] if self.context.statements else None
        return None

    def _not_training(self) -> bool:
        """Say whether the loop lies in a function named for evaluation, testing or a demo.

        A trainer's own method that plays (``MultiTurnGRPOTrainer._play_negotiation``) plays the
        episodes it trains on: in a class named for a trainer, only evaluation and testing count.
        """
        if not self.functions:
            return False
        scopes = (
            TRAINER_SCOPES
            if self.classes_named and self.classes_named[-1].endswith(TRAINER_ENDINGS)
            else NOT_TRAINING_SCOPES
        )
        return any(scopes & set(name.lower().strip("_").split("_")) for name in self.functions)

    def leave_For(self, original_node: cst.For) -> None:
        self._leave(original_node)

    def leave_While(self, original_node: cst.While) -> None:
        self._leave(original_node)


def _several_turns(arg: cst.Arg) -> bool:
    """Say whether a keyword argument gives several turns or steps (``max_turns=cfg.max_turns``, not 1)."""
    return (
        arg.keyword is not None
        and arg.keyword.value in AGENT_TURNS
        and not literal_off(arg.value)
        and not (type(arg.value) is cst.Integer and written_turns(arg.value) <= 1)
    )


def _feedback_role(node: cst.Call, bound: dict[str, str | None]) -> str | None:
    """Return the role of a turn from outside the model that ``node`` adds to a conversation, if any.

    Also a method named for adding a tool's or an environment's turns (``add_tool_response_messages``).

    ``msgs.append({"role": "tool", ...})``, ``msgs.extend([{...}])``, ``msgs.insert(i, {...})``, or a
    name ``bound`` to such a message (``msg = {"role": "tool", ...}; msgs.append(msg)``).
    """
    if not node.args:
        return None
    if method(node) not in ("append", "extend", "insert"):
        # a method adding turns named for their role (``req.add_tool_response_messages(tok, results)``)
        named = words(method(node) or "")
        if named[:1] not in (("add",), ("append",)) or not set(named) & (MESSAGE_WORDS | {"messages"}):
            return None
        return next((r for r in sorted(FEEDBACK_ROLES - {"user"}) if r in named), None)
    value = node.args[-1].value
    items = [e.value for e in value.elements] if type(value) is cst.List else [value]
    roles = [
        role
        for item in items
        if (role := bound.get(item.value) if type(item) is cst.Name else _role(item)) in FEEDBACK_ROLES
    ]
    return next((r for r in roles if r != "user"), roles[0] if roles else None)


OBSERVATION_WORDS = frozenset({"obs", "observation", "observations", "state", "states"})
"""Words of what an environment answers an action with (``next_obs``)."""
DONE_WORDS = frozenset({"done", "dones", "terminated", "terminal", "finished"})
"""Words of an environment's end-of-episode flags."""


def _answers_as_environment(node: cst.Assign) -> bool:
    """Say whether an assignment unpacks an observation and end-of-episode flags, as from ``env.step``."""
    said: list[set[str]] = []
    for target in node.targets:
        if isinstance(target.target, cst.Tuple | cst.List):
            said += [set(words(e.value.value)) for e in target.target.elements if type(e.value) is cst.Name]
    return any(w & OBSERVATION_WORDS for w in said) and any(w & DONE_WORDS for w in said)


ANSWER_WORDS = frozenset(
    {"step", "output", "outputs", "feedback", "response", "responses", "observation", "observations"}
)
"""Words of a helper, named for an environment too, that hands it actions and takes back its answer
(``get_batch_env_outputs(lm_outputs)``, ``env_feedback(actions)``)."""


SCORE_WORDS = frozenset({"reward", "rewards", "score", "scores"})
"""Words of what a reward, not an environment's next observation, is kept in."""


def _scores(statements: list[cst.CSTNode]) -> bool:
    """Say whether the statement keeps what it computes as rewards (``rewards = env_feedback(outs)``).

    A single-turn rollout scored in a sandbox takes only rewards back, which no later turn reads.
    """
    statement = statements[0] if statements else None
    targets = (
        [t.target for t in statement.targets]
        if type(statement) is cst.Assign
        else [statement.target]
        if type(statement) is cst.AnnAssign
        else []
    )
    names = [n.value for t in targets for n in (t, *descendants(t)) if type(n) is cst.Name]
    return any(set(words(n)) & SCORE_WORDS for n in names)


def _environment_answers(node: cst.Call) -> bool:
    """Say whether ``node`` is a helper named for an environment's answer, handed something to act on."""
    func = node.func.attr if type(node.func) is cst.Attribute else node.func
    if type(func) is not cst.Name or not node.args:
        return False
    named = set(words(func.value))
    return bool(named & ENVIRONMENT_WORDS) and bool(named & ANSWER_WORDS)


MESSAGE_WORDS = frozenset({"response", "result", "results", "message", "msg", "output", "turn", "reply"})
"""Words of a helper that builds a message (``tool_response(result, msg)``, ``observation_message(o)``)."""


def _role(value: cst.BaseExpression) -> str | None:
    """Return the ``"role"`` of a message.

    A dict's literal one (``{"role": "tool"}``, ``dict(role="tool")``), or the one a helper building it
    is named for (``tool_response(...)`` -> ``tool``).
    """
    if type(value) is cst.Call and type(value.func) is cst.Name:
        named = set(words(value.func.value))
        role = next((r for r in sorted(FEEDBACK_ROLES - {"user"}) if r in named), None)
        if role is not None and named & MESSAGE_WORDS:
            return role
    return literal_field(value, "role")


def _content_name(node: cst.Call) -> str | None:
    """Return the name a message's ``"content"`` is, when it is a plain name (``{"content": prompt}``)."""
    content = dict_field(node.args[-1].value, "content") if node.args else None
    return content.value if type(content) is cst.Name else None
