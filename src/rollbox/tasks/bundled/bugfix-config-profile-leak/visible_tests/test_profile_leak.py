from shopconfig import load


def test_env_override_does_not_leak_into_next_load():
    staging = load("staging", environ={"SHOP_PAYMENTS__PROVIDER": "live"})
    assert staging["payments"]["provider"] == "live"
    dev = load("dev")
    assert dev["payments"]["provider"] == "sandbox"
