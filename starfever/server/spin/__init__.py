"""How a spin moves money: the request drawn, the wallet, the rule, the group commit."""
