"""A config that picks only the policy-gradient estimator of a trainer run on multi-turn episodes."""

from __future__ import annotations

from pathlib import Path

from arb_audit.analyzer.batch import classify_path

VERL_ENTRY = """\
import hydra
import ray
from verl.trainer.ppo.ray_trainer import Role
from verl.workers.fsdp_workers import ActorRolloutRefWorker, CriticWorker
from training.agent_trainer import RayAgentTrainer
from envs.shop import ShopToolEnv


@hydra.main(config_path="config", config_name="ppo_trainer", version_base=None)
def main(config):
    workers = {Role.ActorRollout: ray.remote(ActorRolloutRefWorker), Role.Critic: ray.remote(CriticWorker)}
    env = ShopToolEnv(max_turns=config.env.max_turns)
    trainer = RayAgentTrainer(config=config, role_worker_mapping=workers, env=env)
    trainer.init_workers()
    trainer.fit()


if __name__ == "__main__":
    main()
"""


def test_an_estimator_picked_by_config_for_episodes_of_several_turns_is_online_rl(tmp_path: Path) -> None:
    """The config picks GRPO or PPO (verl's critic worker handed on), the project's trainer is run on an
    environment built for several turns: online RL whichever it picks; for one turn, the config decides."""
    agent = tmp_path / "main_agent.py"
    agent.write_text(VERL_ENTRY)
    result = classify_path(agent)
    assert (result.primary, result.role) == ("ONLINE_RL", "training")
    assert result.labels == ["ONLINE_RL", "GRPO", "PPO"]
    plain = tmp_path / "main_plain.py"
    plain.write_text(
        VERL_ENTRY.replace("    env = ShopToolEnv(max_turns=config.env.max_turns)\n", "").replace(
            ", env=env", ""
        )
    )
    assert (classify_path(plain).primary, classify_path(plain).role) == ("CONFIG_DEPENDENT", "launcher")
    single = tmp_path / "main_single.py"
    single.write_text(VERL_ENTRY.replace("max_turns=config.env.max_turns", "max_turns=1"))
    assert classify_path(single).primary == "CONFIG_DEPENDENT"
