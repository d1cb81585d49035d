"""线性回归的简洁实现 (d2l-zh): MXNet Gluon 的 Trainer 不需要 zero_grad。"""
from mxnet import autograd, gluon, np, npx
from mxnet.gluon import nn
from d2l import mxnet as d2l

npx.set_np()

# 生成数据集
true_w = np.array([2, -3.4])
true_b = 4.2
features, labels = d2l.synthetic_data(true_w, true_b, 1000)


def load_array(data_arrays, batch_size, is_train=True):
    """构造一个Gluon数据迭代器"""
    dataset = gluon.data.ArrayDataset(*data_arrays)
    return gluon.data.DataLoader(dataset, batch_size, shuffle=is_train)


batch_size = 10
data_iter = load_array((features, labels), batch_size)

# 定义模型
net = nn.Sequential()
net.add(nn.Dense(1))
net.initialize()

# 定义损失函数
loss = gluon.loss.L2Loss()

# 定义优化算法
optimizer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.03})

# 训练
num_epochs = 3
for epoch in range(num_epochs):
    for X, y in data_iter:
        with autograd.record():
            l = loss(net(X), y)  # 计算损失
        l.backward()  # 反向传播, 计算梯度
        optimizer.step(batch_size)  # 更新模型参数
    l = loss(net(features), labels)
    print(f"epoch {epoch + 1}, loss {l.mean().asnumpy():f}")
